//! `disktier assess` end to end on a temp directory: real runs, saved under one assess id, a
//! report written, the scratch directory gone, and an exit code that matches the etcd verdict.

use disktier_store::{Filter, Store};
use disktier_testkit::cli::disktier_at as dt;
use predicates::prelude::*;
use std::path::Path;

/// `assess TARGET ARGS --format json`: the exit status (0 or 1, the etcd verdict) and the
/// document.
fn assess_json(db: &Path, target: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let out = dt(db)
        .arg("assess")
        .arg(target)
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!(
        code == 0 || code == 1,
        "exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn assess_a_directory_saves_runs_and_writes_the_report() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let target = d.path().join("data");
    std::fs::create_dir(&target).unwrap();
    let report = d.path().join("assess.html");
    // Two profiles of the quick suite keep the test short; the default runs all seven.
    let (code, v) = assess_json(
        &db,
        &target,
        &[
            "--only",
            "etcd,latency",
            "--report",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(v["schema_version"], 1);
    let t = &v["targets"][0];
    assert_eq!(t["path"], target.canonicalize().unwrap().to_str().unwrap());
    let ready = t["etcd_ready"].as_bool().expect("an etcd verdict");
    assert_eq!(
        code,
        if ready { 0 } else { 1 },
        "exit code must follow the etcd verdict"
    );
    let runs = t["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r["error"].is_null()), "{runs:?}");
    assert_eq!(runs[0]["verdicts"][0]["name"], "etcd");
    assert!(runs[1]["p99_ns"].as_u64().unwrap() > 0);

    // Saved under the assess id, with the user's path as target.
    let id = v["assess_id"].as_str().unwrap();
    let mut s = Store::open(Some(db.to_str().unwrap())).unwrap();
    let saved = s
        .list(&Filter {
            group_id: Some(id.into()),
            ..Filter::default()
        })
        .unwrap();
    assert_eq!(saved.len(), 2);
    assert!(saved
        .iter()
        .all(|r| r.kind == "assess" && r.target.as_deref() == t["path"].as_str()));

    assert_eq!(v["report"], report.to_str().unwrap());
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("<section id=\"verdicts\">") && html.contains("<svg"));
    let left: Vec<_> = std::fs::read_dir(&target).unwrap().collect();
    assert!(left.is_empty(), "assess left files behind: {left:?}");
}

#[test]
fn assess_refuses_raw_devices_and_missing_paths() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    dt(&db)
        .args(["assess", "/dev/null", "--no-report"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a directory"));
    dt(&db)
        .args(["assess", "--no-report"])
        .arg(d.path().join("missing"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not exist"));
    dt(&db)
        .args(["assess", "--only", "nonsense", "--no-report"])
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such profile"));
    // A report that cannot be written is refused before anything is measured or saved (QA: it
    // failed the assessment after every profile had run, naming `-o`).
    dt(&db)
        .args(["assess", "--only", "etcd", "--report"])
        .arg(d.path().join("missing/r.html"))
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "does not exist; create it, or pass another --report",
        ))
        .stderr(predicate::str::contains("assess ").not());
    assert!(!db.exists(), "nothing was saved");
    // `report -o -` prints the HTML; assess's own table is on standard output already.
    dt(&db)
        .args(["assess", "--report", "-"])
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--report - would write the HTML into assess's own output",
        ));
    if disktier_testkit::require_loop() {
        let dev = disktier_testkit::LoopDev::new(64 << 20);
        dt(&db)
            .arg("assess")
            .arg(&dev.path)
            .arg("--no-report")
            .assert()
            .code(2)
            .stderr(predicate::str::contains("never writes to raw devices"));
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "nothing saved or written"
        );
    }
}

/// QA: with a read-only filesystem as the second target, assess measured the first, then
/// failed (exit 2) with no table. Every target is checked before anything is measured.
#[test]
fn a_read_only_target_is_refused_before_any_target_is_measured() {
    let Some(ro) = disktier_testkit::Mount::tmpfs_if_root(1 << 20) else {
        return;
    };
    ro.remount("ro");
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = d.path().join("r.db");
    let first = d.path().join("t");
    std::fs::create_dir(&first).unwrap();
    dt(&db)
        .args(["assess", "--only", "etcd", "--no-report"])
        .arg(&first)
        .arg(&ro.dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is on a read-only filesystem"))
        .stderr(predicate::str::contains("etcd (1/1)").not());
    assert!(!db.exists(), "nothing was measured or saved");
    assert_eq!(std::fs::read_dir(&first).unwrap().count(), 0);
}

/// QA: on a filesystem too full for the etcd job, assess listed etcd as failed and exited 0
/// ("every target that ran the etcd profile is etcd-ready"), so a gate on its exit status
/// passed a disk that was never checked. The table is printed, and the exit status is 2.
#[test]
fn an_etcd_check_that_could_not_run_is_no_pass() {
    let Some(full) = disktier_testkit::Mount::tmpfs_if_root(2 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    dt(&db)
        .args(["assess", "--only", "etcd", "--no-report"])
        .arg(&full.dir)
        .assert()
        .code(2)
        .stdout(predicate::str::contains("failed"))
        .stderr(predicate::str::contains("bytes free"))
        .stderr(predicate::str::contains(format!(
            "the etcd check could not run on {}",
            full.dir.display()
        )));
}

/// QA: a report that could not be written after the profiles ran (its filesystem full) failed
/// the assessment before anything was printed: no table, and with --no-save nothing kept. The
/// table is printed, then the error (exit 2).
#[test]
fn a_report_that_cannot_be_written_does_not_keep_the_table_off_stdout() {
    let Some(full) = disktier_testkit::Mount::tmpfs_if_root(4096) else {
        return;
    };
    // The check before measuring makes an empty file there; the report's bytes find no room.
    std::fs::write(full.dir.join("fill"), vec![0u8; 4096]).unwrap();
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = d.path().join("r.db");
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    dt(&db)
        .args(["--no-save", "assess", "--only", "etcd", "--report"])
        .arg(full.dir.join("r.html"))
        .arg(&target)
        .assert()
        .code(2)
        .stdout(predicate::str::contains(target.to_str().unwrap()))
        .stdout(predicate::str::contains("assess id "))
        .stderr(predicate::str::contains("r.html"));
    assert!(!full.dir.join("r.html").exists());
}

/// QA: a target whose name holds a newline and an escape sequence broke assess's table row in
/// two and sent the escape to the terminal (bench's header too). Both show it escaped, on one
/// line.
#[test]
fn a_target_name_with_control_characters_stays_on_its_line() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = d.path().join("r.db");
    let target = d.path().join("a\nb\u{1b}[31mred");
    std::fs::create_dir(&target).unwrap();
    let out = dt(&db)
        .args(["--no-save", "assess", "--only", "etcd", "--no-report"])
        .arg(&target)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\u{1b}'), "{text}");
    // The notes on stderr quote the target too ("assess TARGET: etcd (1/1)").
    let notes = String::from_utf8(out.stderr).unwrap();
    assert!(!notes.contains('\u{1b}'), "{notes}");
    assert!(notes.contains("b\\u{1b}[31mred"), "{notes}");
    let row = text
        .lines()
        .find(|l| l.contains("a\\nb\\u{1b}[31mred"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("ready"), "{row}");
    let out = dt(&db)
        .args(["--no-save", "bench"])
        .arg(&target)
        .args(["--rw", "write", "--size", "64k"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\u{1b}'), "{text}");
    let first = text.lines().next().unwrap();
    assert!(first.contains("a\\nb\\u{1b}[31mred (directory)"), "{first}");
}

/// `assess --engine fio` runs the suite through real fio (the same measure path as bench and
/// check): the stored etcd run says engine fio and carries the etcd verdict with its interval;
/// small-files, which fio has no job for, is listed as failed with the fix.
#[test]
fn assess_with_fio_goes_through_the_same_measure_path() {
    if !disktier_testkit::require(disktier_testkit::have("fio"), "fio") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let target = d.path().join("data");
    std::fs::create_dir(&target).unwrap();
    let (code, v) = assess_json(
        &db,
        &target,
        &[
            "--engine",
            "fio",
            "--only",
            "etcd,small-files",
            "--no-report",
        ],
    );
    let runs = v["targets"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{v}");
    assert_eq!(runs[0]["profile"], "etcd");
    assert!(runs[0]["sync_p99_ns"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(
        v["targets"][0]["etcd_ready"].as_bool(),
        Some(code == 0),
        "the exit code follows the etcd verdict"
    );
    assert_eq!(runs[1]["profile"], "small-files");
    assert!(
        runs[1]["error"]
            .as_str()
            .unwrap()
            .contains("fio has no small-files job"),
        "{v}"
    );
    let mut s = Store::open(Some(db.to_str().unwrap())).unwrap();
    let listed = s.list(&Filter::default()).unwrap();
    assert_eq!(listed.len(), 1, "only the etcd run ran");
    let doc = s.get(&listed[0].id).unwrap().doc;
    assert_eq!(doc["engine"], "fio", "{doc}");
    assert_eq!(doc["verdicts"][0]["name"], "etcd");
    assert!(
        doc["verdicts"][0]["ci95"]["n"].as_u64().unwrap() > 0,
        "{doc}"
    );
    assert!(
        std::fs::read_dir(&target).unwrap().next().is_none(),
        "the scratch directory was removed"
    );
}

/// QA: `assess` on tmpfs said ETCD ready with no caveat, and the direct-I/O profiles advised
/// `--direct=false`, which assess does not take.
#[test]
fn assess_on_tmpfs_carries_the_caveat_and_advice_it_can_follow() {
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let db = d.path().join("results.db");
    let target = d.path().join("data");
    std::fs::create_dir(&target).unwrap();
    let args = ["--only", "etcd,read-iops", "--no-report", "--no-save"];
    let (code, v) = assess_json(&db, &target, &args);
    let t = &v["targets"][0];
    assert_eq!(t["etcd_ready"], code == 0);
    assert!(
        t["caveat"].as_str().unwrap().contains("lost on reboot"),
        "{v:#}"
    );
    let failed = t["runs"][1]["error"].as_str().unwrap();
    assert!(failed.contains("no O_DIRECT"), "{failed}");
    assert!(
        !failed.contains("--direct=false") && !failed.contains("--size"),
        "{failed}"
    );
    let out = dt(&db)
        .arg("assess")
        .arg(&target)
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ready (tmpfs)") || text.contains("NOT ready (tmpfs)"),
        "{text}"
    );
    assert!(
        text.contains("caveat: ") && text.contains("not a disk"),
        "{text}"
    );
    assert!(!text.contains("--direct=false"), "{text}");
}

/// QA: an interrupted assess printed partial figures and "ready" with no INTERRUPTED marker,
/// and its JSON had no `interrupted` field.
#[test]
fn an_interrupted_assessment_is_marked_in_json_and_text() {
    for json in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("data");
        std::fs::create_dir(&target).unwrap();
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_disktier"));
        cmd.env("DISKTIER_DB", d.path().join("results.db"))
            .args(["--no-save", "assess"])
            .arg(&target)
            .args(["--only", "write-iops,etcd", "--no-report"]);
        if json {
            cmd.args(["--format", "json"]);
        }
        // write-iops --quick runs 1 s of ramp and 5 s: stop it inside.
        let out = disktier_testkit::cli::interrupted_after(
            &mut cmd,
            std::time::Duration::from_millis(2500),
        );
        assert_eq!(out.status.code(), Some(2));
        if json {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["interrupted"], true, "{v:#}");
            let runs = v["targets"][0]["runs"].as_array().unwrap();
            assert_eq!(runs.len(), 1, "the profile after it did not run: {v:#}");
            assert_eq!(runs[0]["interrupted"], true, "{v:#}");
        } else {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.starts_with("INTERRUPTED"), "{text}");
            assert!(text.contains("(partial)"), "{text}");
        }
    }
}

/// QA on dt-s24: `--no-save assess` ended with "assess id ID (0 s), ...", an id `show` and
/// `history --group` then could not find; it now says the run was not saved. A saved run's line
/// is as before.
#[test]
fn an_assessment_not_saved_says_so_beside_its_id() {
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let db = d.path().join("r.db");
    let target = d.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let line = |no_save: bool| {
        let mut c = dt(&db);
        if no_save {
            c.arg("--no-save");
        }
        let out = c
            .args(["assess", "--only", "etcd", "--no-report"])
            .arg(&target)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(0), "{text}");
        text.lines()
            .find(|l| l.starts_with("assess id "))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string()
    };
    let unsaved = line(true);
    assert!(
        unsaved.contains("not saved (--no-save): show and history will not find it"),
        "{unsaved}"
    );
    let saved = line(false);
    assert!(!saved.contains("not saved"), "{saved}");
}
