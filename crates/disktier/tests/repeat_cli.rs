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
        .args([
            "--profile",
            "write-iops",
            "--quick",
            "--size",
            "1m",
            "--runtime",
            "1s",
        ])
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
