//! `disktier import fio-text FILE` through the real binary: fio's default text report of a run
//! (fio 3.33, an etcd-style job with fdatasync=1) imported next to the JSON of the same run,
//! then `show`, `compare` and `report` on both; and the seeds' own reports.

use disktier_testkit::cli::disktier_at as dt;
use disktier_testkit::cli::{json_ok, stdout_ok};
use predicates::prelude::*;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../engine/tests/fixtures/fio-text")
        .join(name)
}

#[test]
fn text_and_json_of_one_run_import_to_the_same_figures() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let out = dt(&db)
        .args(["--format", "json", "import", "fio"])
        .arg(fixture("etcd-2300-3.33.json"))
        .args(["--profile", "etcd"])
        .output()
        .unwrap();
    let j = json_ok(&out);
    let out = dt(&db)
        .args(["--format", "json", "import", "fio-text"])
        .arg(fixture("etcd-2300-3.33.txt"))
        .args([
            "--profile",
            "etcd",
            "--target",
            "/var/tmp/fiotext",
            "--host",
            "qa-vm",
        ])
        .output()
        .unwrap();
    let t = json_ok(&out);
    assert_eq!(t["engine"], "fio");
    assert_eq!(t["profile"], "etcd");
    assert_eq!(t["target"]["path"], "/var/tmp/fiotext");
    assert_eq!(t["host"]["hostname"], "qa-vm");
    for k in ["ios", "bytes"] {
        assert_eq!(
            t["results"]["write"][k], j["results"]["write"][k],
            "write.{k}"
        );
    }
    // fio's JSON prints rates to 6 decimals.
    for k in ["iops", "bw_bytes"] {
        let (a, b) = (
            t["results"]["write"][k].as_f64().unwrap(),
            j["results"]["write"][k].as_f64().unwrap(),
        );
        assert!((a - b).abs() < 1e-5, "write.{k}: {a} {b}");
    }
    // Latencies within the microsecond fio printed them in.
    let (ts, js) = (
        &t["results"]["sync"]["lat_ns"],
        &j["results"]["sync"]["lat_ns"],
    );
    for p in ["50", "99", "99.9"] {
        let (a, b) = (
            ts["percentiles"][p].as_f64().unwrap(),
            js["percentiles"][p].as_f64().unwrap(),
        );
        assert!((a - b).abs() <= 1000.0, "p{p}: text {a} json {b}");
    }
    // The sync count is not in the text: unknown (0, shown as "-"), and said so.
    assert_eq!(t["results"]["sync"]["ios"], 0);
    let warnings = t["warnings"].to_string();
    assert!(warnings.contains("the sync count"), "{warnings}");
    assert!(warnings.contains("one fdatasync per write"), "{warnings}");
    // Both judged by the etcd verdict, on fdatasync p99 < 10 ms, to the same outcome.
    let verdict = |v: &serde_json::Value| {
        v["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == "etcd")
            .cloned()
            .unwrap_or_else(|| panic!("no etcd verdict: {v}"))
    };
    let (tv, jv) = (verdict(&t), verdict(&j));
    assert_eq!(tv["pass"], jv["pass"]);
    assert_eq!(tv["threshold"], 10_000_000.0);

    let out = dt(&db)
        .args(["history", "--format", "json"])
        .output()
        .unwrap();
    let h = json_ok(&out);
    let runs = h["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{h}");
    let (text_id, json_id) = (
        runs[0]["id"].as_str().unwrap().to_string(),
        runs[1]["id"].as_str().unwrap().to_string(),
    );
    let out = dt(&db)
        .args(["show", &text_id, "--format", "json"])
        .output()
        .unwrap();
    let s = json_ok(&out);
    assert_eq!(s["results"]["write"]["ios"], j["results"]["write"]["ios"]);
    let out = dt(&db).args(["show", &text_id]).output().unwrap();
    let shown = stdout_ok(&out);
    let sync = shown
        .lines()
        .find(|l| l.trim_start().starts_with("sync"))
        .unwrap();
    assert!(
        sync.contains(" - IOPS") && !sync.contains(" 0 IOPS"),
        "{shown}"
    );
    assert!(shown.contains("PASS etcd:"), "{shown}");
    let out = dt(&db)
        .args(["compare", &json_id, &text_id])
        .output()
        .unwrap();
    let cmp = stdout_ok(&out);
    // The same run: the etcd figure compares as the same.
    assert!(
        cmp.contains("fdatasync p99 7.63 ms vs 7.63 ms: the same"),
        "{cmp}"
    );
    assert!(cmp.contains("write IOPS 774 vs 774: the same"), "{cmp}");
    let out = dt(&db)
        .args(["compare", &json_id, &text_id, "--format", "json"])
        .output()
        .unwrap();
    json_ok(&out);
    // And the HTML report holds both, each with its etcd verdict.
    let html = d.path().join("report.html");
    let out = dt(&db).args(["report", "-o"]).arg(&html).output().unwrap();
    stdout_ok(&out);
    let html = std::fs::read_to_string(&html).unwrap();
    for id in [&json_id, &text_id] {
        assert!(html.contains(id.as_str()), "{id} not in the report");
    }
    assert!(html.matches("etcd-iops-50").count() >= 2);
}

#[test]
fn the_ostree_issue_report_gets_the_etcd_verdict() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let out = dt(&db)
        .args(["--no-save", "--format", "json", "import", "fio-text"])
        .arg(fixture("ostree-concurrent-fio-3.19.txt"))
        .output()
        .unwrap();
    let v = json_ok(&out);
    assert_eq!(
        v["results"]["sync"]["lat_ns"]["percentiles"]["99"],
        6_194_000
    );
    assert_eq!(v["results"]["write"]["ios"], 13677);
    assert_eq!(v["target"]["device"], "nvme1n1");
    let etcd = v["verdicts"].as_array().unwrap();
    assert!(
        etcd.iter()
            .any(|x| x["name"] == "etcd" && x["pass"] == true),
        "{v}"
    );
    // fio's text prints no target: the text result says it is unknown (it printed a blank
    // path before "(directory)").
    let out = dt(&db)
        .args(["--no-save", "import", "fio-text"])
        .arg(fixture("ostree-concurrent-fio-3.19.txt"))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.starts_with("unknown target (an import's --target names it)"),
        "{shown}"
    );
    // Standard input too, and a job that is not there is refused with the range.
    dt(&db)
        .args(["--no-save", "import", "fio-text", "-", "--job", "1"])
        .pipe_stdin(fixture("ostree-concurrent-fio-3.19.txt"))
        .unwrap()
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pass --job 0 to 0"));
}

#[test]
fn the_wrong_importer_names_the_right_one() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    dt(&db)
        .args(["--no-save", "import", "fio"])
        .arg(fixture("randread-3.33.txt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("disktier import fio-text"));
    dt(&db)
        .args(["--no-save", "import", "fio-text"])
        .arg(fixture("randread-3.33.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("disktier import fio`"));
}
