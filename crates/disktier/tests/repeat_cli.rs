//! `--repeat N` on `bench` and `check etcd` with real short runs in a temp dir: N runs kept in
//! the store as one group, and an aggregate computed from the runs' own figures.

use disktier_testkit::cli::disktier_at as dt;
use std::path::Path;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Each run's p99 latency in ns for `direction` (`sync`, `write`), in the runs' order.
fn p99s(runs: &[serde_json::Value], direction: &str) -> Vec<f64> {
    runs.iter()
        .map(|r| {
            r["results"][direction]["lat_ns"]["percentiles"]["99"]
                .as_f64()
                .unwrap()
        })
        .collect()
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `check etcd DIR --quick --size SIZE --repeat N --threshold T` and `extra`, into store `db`.
fn check_repeated(
    db: &Path,
    dir: &Path,
    size: &str,
    repeat: &str,
    threshold: &str,
    extra: &[&str],
) -> std::process::Output {
    dt(db)
        .args(["check", "etcd"])
        .arg(dir)
        .args([
            "--quick",
            "--size",
            size,
            "--repeat",
            repeat,
            "--threshold",
            threshold,
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn check_etcd_repeat_keeps_runs_and_aggregates_them() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let dir = d.path().join("etcd");
    std::fs::create_dir(&dir).unwrap();
    let out = check_repeated(&db, &dir, "128k", "3", "10s", &["--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    let p99s = p99s(runs, "sync");
    let agg = &v["aggregate"];
    assert_eq!(agg["runs"], 3);
    assert_eq!(agg["metric"], "sync.p99");
    assert_eq!(agg["median_p99_ns"].as_f64().unwrap(), median(p99s.clone()));
    let min = p99s.iter().cloned().fold(f64::INFINITY, f64::min);
    let max = p99s.iter().cloned().fold(0.0, f64::max);
    assert_eq!(agg["min_p99_ns"].as_f64().unwrap(), min);
    assert_eq!(agg["max_p99_ns"].as_f64().unwrap(), max);
    let mean = p99s.iter().sum::<f64>() / 3.0;
    let sd = (p99s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    assert!((agg["cv"].as_f64().unwrap() - sd / mean).abs() < 1e-9);
    assert_eq!(agg["passed"], 3);
    assert_eq!(agg["verdict"], "pass");

    // Each run is its own stored run, all in the group the output names.
    let group = v["group_id"].as_str().unwrap();
    let h = json(
        &dt(&db)
            .args(["history", "--group", group, "--format", "json"])
            .output()
            .unwrap(),
    );
    let mut stored: Vec<String> = h["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let mut printed: Vec<String> = runs
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    stored.sort();
    printed.sort();
    assert_eq!(stored, printed);

    // An impossible threshold fails every run: exit 1, verdict fail, text table.
    let out = check_repeated(&db, &dir, "64k", "2", "1ns", &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("verdict FAIL: 0 of 2 runs passed"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.contains("FAIL")).count(),
        3,
        "{text}"
    );
}

#[test]
fn bench_repeat_has_no_verdict_but_an_aggregate() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let out = dt(&db)
        .arg("bench")
        .arg(d.path())
        .args("--profile write-iops --quick --size 1m --runtime 1s".split_whitespace())
        .args(["--repeat", "2", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let agg = &v["aggregate"];
    assert_eq!(agg["metric"], "write.p99");
    assert_eq!(agg["verdict"], "none");
    let p99s = p99s(runs, "write");
    assert_eq!(agg["median_p99_ns"].as_f64().unwrap(), median(p99s));
    dt(&db)
        .arg("bench")
        .arg(d.path())
        .args(["--repeat", "0"])
        .assert()
        .code(2);
}

/// `disktier` with `args` (store `db`), stopped with SIGINT after `after`.
fn interrupted(db: &Path, args: &[&str], after_ms: u64) -> std::process::Output {
    disktier_testkit::cli::interrupted_after(
        std::process::Command::new(env!("CARGO_BIN_EXE_disktier"))
            .env("DISKTIER_DB", db)
            .env_remove("XDG_DATA_HOME")
            .args(args),
        std::time::Duration::from_millis(after_ms),
    )
}

/// QA: `check etcd --repeat 3` stopped 2 s into its first run printed "verdict PASS: 1 of 1
/// runs passed" (aggregate verdict pass, runs 1). The run a signal stopped is saved, marked, but
/// not counted; the summary says the repeat was interrupted; exit 2.
#[test]
fn a_repetition_a_signal_stopped_is_not_counted() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("etcd");
    std::fs::create_dir(&dir).unwrap();
    let dir_s = dir.display().to_string();
    let args = [
        "check",
        "etcd",
        &dir_s,
        "--quick",
        "--repeat",
        "3",
        "--time-based",
        "--runtime",
        "20s",
    ];
    let db = d.path().join("text.db");
    let out = interrupted(&db, &args, 2000);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        !text.contains("PASS") && !text.contains("verdict "),
        "{text}"
    );
    assert!(
        text.contains("INTERRUPTED (partial, not counted)"),
        "{text}"
    );
    assert!(
        text.contains("INTERRUPTED: a signal stopped run 1 of 3; it is not counted, and the aggregate is over the 0 run(s) that completed"),
        "{text}"
    );
    assert!(
        err.contains("interrupted by a signal during run 1 of 3"),
        "{err}"
    );
    let mut json_args = vec!["--format", "json"];
    json_args.extend(args);
    let out = interrupted(&d.path().join("json.db"), &json_args, 2000);
    assert_eq!(out.status.code(), Some(2));
    let v = json(&out);
    assert_eq!(v["interrupted"], true, "{v:#}");
    assert_eq!(v["aggregate"]["runs"], 0, "{v:#}");
    assert_eq!(v["aggregate"]["passed"], serde_json::Value::Null, "{v:#}");
    assert_ne!(v["aggregate"]["verdict"], "pass", "{v:#}");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{v:#}");
    assert_eq!(runs[0]["interrupted"], true);
    assert!(runs[0]["id"].is_string(), "the partial run is saved: {v:#}");
}

/// QA: Ctrl-C during the layout stored a run of zeros. A run stopped before one I/O completed
/// (here: inside a 30 s ramp, whose I/O is not counted) is neither printed nor saved.
#[test]
fn a_run_stopped_before_any_io_completed_is_not_saved() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let db = d.path().join("results.db");
    let dir_s = dir.display().to_string();
    for (what, line) in [
        (
            "bench",
            "--format json bench {} --rw write --size 4m --time-based --runtime 5s --ramp-time 30s",
        ),
        (
            "check --repeat",
            "check etcd {} --quick --repeat 2 --time-based --runtime 5s --ramp-time 30s",
        ),
    ] {
        let args = disktier_testkit::cli::argv(line, &dir_s);
        let out = interrupted(&db, &args, 1000);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        if what == "bench" {
            assert!(
                err.contains("interrupted by a signal before any I/O completed on")
                    && err.contains("nothing was measured, so nothing is saved"),
                "{what}: {err}"
            );
            assert!(out.stdout.is_empty(), "{what}: a document was printed");
        } else {
            assert!(err.contains("during run 1 of 2"), "{what}: {err}");
        }
        assert!(!db.exists(), "{what}: a run was saved: {err}");
    }
}
