//! QA (session 27): `check etcd --quick` had no cap on its run time. Its 4 MiB of 2300-byte
//! writes, each followed by an fdatasync, are 1,823 syncs: on a loop device throttled (cgroup v1
//! blkio) to 20 write IOPS, 8 a second, the check ran for almost 4 minutes. It now stops after
//! 5 s (fio's --runtime without --time_based), and says that the cap ended it early, with how
//! much it wrote: the verdict stands on fewer samples, with their interval.

use disktier_testkit::{throttled_fs, BlkioThrottle};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// disktier with `args`, throttled, and ended by `timeout` after 120 s: without the cap the run
/// takes minutes, and the test fails instead of waiting for it.
fn capped(throttle: &BlkioThrottle, args: &[&str]) -> Output {
    let mut all = vec!["120", env!("CARGO_BIN_EXE_disktier")];
    all.extend_from_slice(args);
    throttle
        .wrap(Path::new("/usr/bin/timeout"), &all)
        .output()
        .unwrap()
}

#[test]
fn a_quick_etcd_check_on_a_slow_disk_is_capped_and_says_so() {
    let Some((_dev, m, throttle)) = throttled_fs(320 << 20, "xfs", 20) else {
        return;
    };
    let dir = m.dir.display().to_string();
    let out = capped(
        &throttle,
        &[
            "--no-save",
            "--format",
            "json",
            "check",
            "etcd",
            &dir,
            "--quick",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let written = doc["results"]["write"]["bytes"].as_u64().unwrap();
    assert!(written > 0 && written < 4 << 20, "{written}");
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("--quick's cap of 5 s ended the job after ")
            && warnings.contains(" of its 1823 writes (")
            && warnings.contains(" of 4 MiB, ")
            && warnings.contains("the p99 is of fewer samples than the whole job's"),
        "{warnings}"
    );
    assert_eq!(doc["verdicts"][0]["pass"], false, "{}", doc["verdicts"]);
    // Its p99's lower bound is far over 10 ms: a firm failure, not an inconclusive one.
    assert!(
        doc["verdicts"][0].get("inconclusive").is_none(),
        "{}",
        doc["verdicts"]
    );
    // A job that reaches its size says nothing of a cap.
    let out = throttle
        .wrap(
            Path::new(env!("CARGO_BIN_EXE_disktier")),
            &[
                "--no-save",
                "--format",
                "json",
                "check",
                "etcd",
                &dir,
                "--quick",
                "--size",
                "23k",
            ],
        )
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // 23 KiB is 10 whole writes of 2300 bytes.
    assert_eq!(
        doc["results"]["write"]["bytes"], 23_000,
        "{}",
        doc["results"]
    );
    assert!(
        !doc["warnings"].to_string().contains("cap"),
        "{}",
        doc["warnings"]
    );
}

/// The quick suite of `assess` runs the same capped etcd job: its saved run carries the same
/// warning (`show RUN` prints it), as `check etcd`'s does.
#[test]
fn assess_saves_the_quick_etcd_runs_cap_warning() {
    let Some((_dev, m, throttle)) = throttled_fs(320 << 20, "xfs", 20) else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    let (dir, db) = (m.dir.display().to_string(), db.display().to_string());
    let out = capped(
        &throttle,
        &[
            "--db",
            &db,
            "--format",
            "json",
            "assess",
            &dir,
            "--only",
            "etcd",
            "--no-report",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The assessment's own output carries the warning too (before, only `show RUN` did).
    let warnings = doc["targets"][0]["runs"][0]["warnings"].to_string();
    assert!(
        warnings.contains("--quick's cap of 5 s ended the job after "),
        "{warnings}"
    );
    let id = doc["targets"][0]["runs"][0]["run_id"].as_str().unwrap();
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_disktier"))
        .args(["--db", &db, "--format", "json", "show", id])
        .output()
        .unwrap();
    let run: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert!(
        run.to_string()
            .contains("--quick's cap of 5 s ended the job after "),
        "{run}"
    );
}

/// The text table shows the etcd cell as measured; the warning under it says the cap cut the
/// job short (QA: the table's figure stood there as if whole).
#[test]
fn assess_prints_a_runs_warning_under_its_table() {
    let Some((_dev, m, throttle)) = throttled_fs(320 << 20, "xfs", 20) else {
        return;
    };
    let dir = m.dir.display().to_string();
    let out = capped(
        &throttle,
        &["--no-save", "assess", &dir, "--only", "etcd", "--no-report"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("{dir}: etcd: warning: ")))
        .unwrap_or_else(|| panic!("no warning line under the table:\n{stdout}"));
    assert!(
        line.contains("--quick's cap of 5 s ended the job after "),
        "{line}"
    );
}

/// QA (session 29): against `--threshold 1s`, the same capped run (39 fdatasyncs, each near
/// 100-200 ms) passed with exit 0, "the disk can be used to host etcd", from a p99 that had no
/// upper bound. A capped run whose interval does not settle the verdict is now inconclusive:
/// exit 1, `inconclusive` in JSON, and the text says to run without --quick.
#[test]
fn a_capped_pass_the_interval_does_not_settle_is_inconclusive() {
    let Some((_dev, m, throttle)) = throttled_fs(320 << 20, "xfs", 20) else {
        return;
    };
    let dir = m.dir.display().to_string();
    let args = ["check", "etcd", &dir, "--quick", "--threshold", "1s"];
    let mut json = vec!["--no-save", "--format", "json"];
    json.extend_from_slice(&args);
    let out = capped(&throttle, &json);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &doc["verdicts"][0];
    assert_eq!(
        (&v["pass"], &v["inconclusive"]),
        (&Value::Bool(false), &Value::Bool(true)),
        "{v}"
    );
    assert!(v["ci95"]["hi_ns"].is_null(), "{v}");
    let msg = v["message"].as_str().unwrap();
    assert!(
        msg.starts_with("INCONCLUSIVE: the run was cut short after ")
            && msg.contains("run without --quick"),
        "{msg}"
    );
    let mut text = vec!["--no-save"];
    text.extend_from_slice(&args);
    let out = capped(&throttle, &text);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("\nINCONCLUSIVE: the run was cut short after "),
        "{stdout}"
    );
    assert!(
        !stdout.contains("the disk can be used to host etcd"),
        "{stdout}"
    );
}

/// A `--runtime` the user gave that ends the job before its size is cut short as the cap is,
/// and the fix says to give a longer runtime, not to drop a --quick that was never given (QA:
/// `--runtime 1ms` passed from 1 fdatasync with exit 0).
#[test]
fn a_runtime_that_cuts_the_job_short_asks_for_a_longer_one() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = d.path().display().to_string();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_disktier"))
        .args(["--no-save", "--format", "json", "check", "etcd", &dir])
        .args(["--runtime", "1ms"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("the runtime of 0.001 s ended the job after ")
            && warnings.contains("run with a longer --runtime (or none)")
            && !warnings.contains("--quick"),
        "{warnings}"
    );
    let v = &doc["verdicts"][0];
    assert_eq!(v["inconclusive"], true, "{v}");
    assert!(!v["message"].to_string().contains("--quick"), "{v}");
}

/// `--repeat`'s table showed a run cut short whose verdict is inconclusive as FAIL, as if the
/// disk had been shown too slow; it says INCONCLUSIVE, and under the verdict how many such runs
/// there were.
#[test]
fn repeat_shows_a_run_cut_short_as_inconclusive() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = d.path().display().to_string();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_disktier"))
        .args(["--no-save", "check", "etcd", &dir, "--runtime", "1ms"])
        .args(["--repeat", "2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(" us  ") || l.contains(" ms  "))
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert!(
        rows.iter().all(|r| r.ends_with("INCONCLUSIVE (cut short)")),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "\n2 of 2 runs were cut short with too few fdatasyncs to settle their verdict"
        ),
        "{stdout}"
    );
}

/// A stored run whose verdict is inconclusive was shown by `show` as FAIL and drawn in the
/// report as "✗ etcd not ready", as if the disk had been shown too slow; both say inconclusive.
#[test]
fn show_and_report_say_a_stored_inconclusive_verdict_is_inconclusive() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = d.path().join("t");
    std::fs::create_dir(&dir).unwrap();
    let db = d.path().join("r.db").display().to_string();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_disktier"))
            .args(["--db", &db])
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[
        "--format",
        "json",
        "check",
        "etcd",
        &dir.display().to_string(),
        "--runtime",
        "1ms",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["verdicts"][0]["inconclusive"], true, "{doc}");
    let listed = run(&["history", "--format", "json"]);
    let h: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id = h["runs"][0]["id"]
        .as_str()
        .expect("the run's id")
        .to_string();
    let shown = run(&["show", &id]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("  INCONCLUSIVE etcd: "), "{text}");
    assert!(!text.contains("FAIL etcd"), "{text}");
    let page = d.path().join("r.html");
    let out = run(&["report", "-o", &page.display().to_string()]);
    assert!(out.status.success(), "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("? etcd inconclusive"),
        "no inconclusive badge"
    );
    assert!(!html.contains("etcd not ready"), "drawn as a failure");
}
