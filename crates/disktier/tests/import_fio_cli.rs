//! `disktier import fio` through the real binary, on fio's plain `--output-format=json` of a job
//! file with two stonewalled reporting groups (`fixtures/fio/cmp-2groups-3.33.json`: a one-job
//! group running etcd's job, then a group of two random readers, written by fio 3.33): the
//! groups keep what fio measured and say what it did not, never 0; one job of several points at
//! `--jobs`; bad files say what is wrong with them; a failed etcd verdict exits 1.

use disktier_testkit::cli::disktier_at as dt;
use serde_json::Value;
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fio");

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

fn import(args: &[&str], file: &Path) -> std::process::Output {
    let d = tempfile::tempdir().unwrap();
    dt(&d.path().join("results.db"))
        .args(["--no-save", "import", "fio"])
        .args(args)
        .arg(file)
        .output()
        .unwrap()
}

fn json(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// QA: a one-job group showed p50/p99 0 ns and stdev 0 in `groups`, though its job entry had a
/// p99 of 6.13 ms; every merged percentile was 0.
#[test]
fn imported_groups_keep_the_jobs_figures_and_never_invent_zeros() {
    let file = fixture("cmp-2groups-3.33.json");
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let doc = json(&import(&["--jobs", "--format", "json"], &file));
    let (jobs, groups) = (&doc["jobs"], &doc["groups"]);
    assert_eq!(groups.as_array().unwrap().len(), 2, "{doc:#}");
    // The one-job group is its job's own figures.
    assert_eq!(groups[0]["results"]["sync"], jobs[0]["results"]["sync"]);
    assert_eq!(groups[0]["results"]["write"], jobs[0]["results"]["write"]);
    let p99 = raw["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"]
        .as_u64()
        .unwrap();
    assert_eq!(
        groups[0]["results"]["sync"]["lat_ns"]["percentiles"]["99"],
        p99
    );
    // The group of two readers: counts add up, min/max/mean exact, stdev pooled; its
    // percentiles cannot be derived without fio's bins: absent, not 0.
    let read = &groups[1]["results"]["read"];
    let (a, b) = (&raw["jobs"][1]["read"], &raw["jobs"][2]["read"]);
    assert_eq!(read["ios"], 1024);
    let n = |v: &Value, k: &str| v["clat_ns"][k].as_f64().unwrap();
    assert_eq!(
        read["lat_ns"]["min"].as_f64(),
        Some(n(a, "min").min(n(b, "min")))
    );
    assert_eq!(
        read["lat_ns"]["max"].as_f64(),
        Some(n(a, "max").max(n(b, "max")))
    );
    let mean = (n(a, "mean") + n(b, "mean")) / 2.0;
    assert!((read["lat_ns"]["mean"].as_f64().unwrap() - mean).abs() < 1e-6 * mean);
    assert!(read["lat_ns"]["stdev"].as_f64().unwrap() > 0.0);
    assert_eq!(read["lat_ns"]["percentiles"], serde_json::json!({}));
    // Nowhere a 0 latency.
    for g in groups.as_array().unwrap() {
        for dir in ["read", "write", "sync"] {
            let l = &g["results"][dir]["lat_ns"];
            for (k, v) in l["percentiles"].as_object().into_iter().flatten() {
                assert_ne!(v, 0, "group {} {dir} p{k}", g["group"]);
            }
            for k in ["min", "max", "mean"] {
                assert_ne!(l[k], 0, "group {} {dir} {k}", g["group"]);
            }
        }
    }
    // The text: the one-job group's row shows its p99; unknown figures are "-".
    let out = import(&["--jobs"], &file);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains(" 0 ns"), "{text}");
    let sync = text
        .lines()
        .find(|l| l.starts_with("group 0") && l.contains("sync"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        sync.contains(&disktier_units::fmt_ns(p99 as f64)),
        "{sync}\n{text}"
    );
}

/// QA: importing one job of a two-group file told the user to run fio with --group_reporting,
/// which they had: groups are never combined; --jobs imports them all.
#[test]
fn one_job_of_several_groups_points_to_jobs() {
    let out = import(&["--format", "json"], &fixture("cmp-2groups-3.33.json"));
    let doc = json(&out);
    let w = doc["warnings"][0].as_str().unwrap();
    assert!(
        w.contains("--jobs") && w.contains("different reporting groups"),
        "{w}"
    );
    assert!(!w.contains("--group_reporting"), "{w}");
}

/// QA: `{"jobs":[]}` said "a job in \"jobs\" is missing"; a missing file said it "is not fio JSON
/// output (cannot read it: ...)".
#[test]
fn empty_and_unreadable_files_say_what_is_wrong() {
    let d = tempfile::tempdir().unwrap();
    let empty = d.path().join("empty.json");
    std::fs::write(&empty, "{\"jobs\": []}\n").unwrap();
    for args in [&[][..], &["--jobs"][..]] {
        let out = import(args, &empty);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("empty.json holds no jobs"), "{err}");
        let out = import(args, &d.path().join("missing.json"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.starts_with("error: cannot read "), "{err}");
        assert!(!err.contains("not fio JSON"), "{err}");
    }
}

/// The global rule (exit 1 when a verdict failed) holds for imports too: the run is saved and
/// printed, and the exit status says the etcd verdict failed.
#[test]
fn an_import_whose_etcd_verdict_fails_exits_1() {
    let d = tempfile::tempdir().unwrap();
    let mut raw: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("etcd-3.33.json")).unwrap()).unwrap();
    // The same run with a 20 ms fdatasync tail.
    let lat = &mut raw["jobs"][0]["sync"]["lat_ns"];
    for k in [
        "99.000000",
        "99.500000",
        "99.900000",
        "99.950000",
        "99.990000",
    ] {
        lat["percentile"][k] = Value::from(20_000_000u64);
    }
    lat["max"] = Value::from(25_000_000u64);
    let slow = d.path().join("slow.json");
    std::fs::write(&slow, raw.to_string()).unwrap();
    let db = d.path().join("results.db");
    let out = dt(&db).args(["import", "fio"]).arg(&slow).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("WARN: 99th percentile"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("saved as run"));
    // A passing one exits 0.
    let out = import(&[], &fixture("etcd-3.33.json"));
    assert_eq!(out.status.code(), Some(0));
}

/// QA: `show` and `bench` told the user that "an import's --target names it" when fio's JSON
/// named no file, but `import fio` had no --target (nor --host, which its JSON never gives):
/// the run stayed "-" in `history`. Both now name the run, one job or every job.
#[test]
fn target_and_host_name_the_imported_run() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let file = fixture("cmp-2groups-3.33.json");
    let run = |args: &[&str]| {
        json(
            &dt(&db)
                .args(["--format", "json", "import", "fio"])
                .args(args)
                .arg(&file)
                .output()
                .unwrap(),
        )
    };
    let plain = run(&[]);
    let fios = plain["target"]["path"].as_str().unwrap().to_string();
    assert!(!fios.is_empty() && fios != "ebs-gp3", "{fios}");
    assert_eq!(plain["host"]["hostname"], "");
    let one = run(&["--target", "ebs-gp3", "--host", "node-a"]);
    assert_eq!(one["target"]["path"], "ebs-gp3");
    assert_eq!(one["target"]["kind"], plain["target"]["kind"]);
    assert_eq!(one["host"]["hostname"], "node-a");
    let w = one["warnings"].to_string();
    assert!(
        w.contains("host facts other than its name are unknown"),
        "{w}"
    );
    let all = run(&["--jobs", "--target", "/dev/nvme1n1", "--host", "node-b"]);
    let jobs = all["jobs"].as_array().unwrap();
    assert!(jobs.len() > 1);
    assert!(
        jobs.iter().all(|j| j["target"]["path"] == "/dev/nvme1n1"),
        "{jobs:?}"
    );
    assert_eq!(all["host"]["hostname"], "node-b");
    let listed = dt(&db)
        .args(["--format", "json", "history"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let named: Vec<(String, String)> = listed["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["target"].as_str().unwrap_or("-").to_string(),
                r["hostname"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    for want in [
        ("/dev/nvme1n1", "node-b"),
        ("ebs-gp3", "node-a"),
        (fios.as_str(), "-"),
    ] {
        assert!(
            named.iter().any(|(t, h)| (t.as_str(), h.as_str()) == want),
            "{named:?}"
        );
    }
    // A name is one printable line.
    let out = import(&["--target", "a\nb"], &file);
    assert_eq!(out.status.code(), Some(2));
}

/// QA: fio's `--output-format=normal,json` (and `json+,normal`) writes its JSON after the text
/// report's head, and its job reports after the JSON; `import fio` refused such a file as "fio's
/// text report", though the JSON in it is what it reads. It now reads the JSON (json+ bins
/// included) and leaves the text, as `import fio-text` leaves the JSON.
#[test]
fn fios_normal_and_json_output_in_one_file_imports_its_json() {
    for (name, bins) in [
        ("etcd-normal-json-3.33.out", false),
        ("fdatasync-jsonplus-normal-3.33.out", true),
    ] {
        let file = fixture(name);
        let text = std::fs::read_to_string(&file).unwrap();
        let raw: Value = serde_json::Deserializer::from_str(&text[text.find("\n{").unwrap()..])
            .into_iter()
            .next()
            .unwrap()
            .unwrap();
        let out = import(&["--format", "json"], &file);
        assert_ne!(
            out.status.code(),
            Some(2),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let (fio, r) = (&raw["jobs"][0], &doc["results"]);
        assert_eq!(r["write"]["ios"], fio["write"]["total_ios"], "{name}");
        assert_eq!(r["write"]["bytes"], fio["write"]["io_bytes"], "{name}");
        assert_eq!(r["sync"]["ios"], fio["sync"]["lat_ns"]["N"], "{name}");
        assert_eq!(
            r["sync"]["lat_ns"]["percentiles"]["99"],
            fio["sync"]["lat_ns"]["percentile"]["99.000000"],
            "{name}"
        );
        let ci = &doc["verdicts"][0]["ci95"];
        assert_eq!(ci["approximate"], !bins, "{name}: {ci}");
    }
}

/// QA: a job fio could not run (randtrim on a regular file: `err=25`, nothing read, written or
/// trimmed) was imported from its JSON with exit 0, one job or `--jobs`, and saved as a run of
/// nothing, while `import fio-text` of the same run refused it as "an excerpt". Both imports now
/// refuse it (exit 2), naming fio's error and the fix. Real fio 3.33 output
/// (`--output-format=normal,json`: the two reports of one run in one file).
#[test]
fn a_job_fio_could_not_run_is_refused_naming_its_error() {
    let file = fixture("failed-trim-normal-json-3.33.out");
    let d = tempfile::tempdir().unwrap();
    for args in [
        &["fio"][..],
        &["fio", "--jobs"],
        &["fio-text"],
        &["fio-text", "--jobs"],
    ] {
        let out = dt(&d.path().join("results.db"))
            .arg("import")
            .args(args)
            .arg(&file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("job 0 (t) has no") && err.contains("fio reported error 25 for it"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("excerpt"), "{args:?}: {err}");
    }
    // Nothing was saved: the store holds no run (or was never made).
    let out = dt(&d.path().join("results.db"))
        .args(["--format", "json", "history"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        listed["runs"].as_array().is_none_or(Vec::is_empty),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// QA: importing the same fio JSON twice stored two identical runs. The second import (and
/// the second of `import fio --jobs`, `import fio-text` and `import etcd-perf`) prints the result
/// as the first did, says which run holds it, stores nothing and exits as the first did; the
/// same file imported with another --target is another run.
#[test]
fn the_same_import_twice_is_stored_once() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let etcd_perf = Path::new(FIXTURES).join("../etcd-perf/ostree-baseline-fio-3.19.txt");
    let fio_json = fixture("etcd-3.33.json");
    let fio_text = fixture("etcd-normal-json-3.33.out");
    let jobs = fixture("randrw-2jobs-3.33.json");
    let cases: [(&[&str], &Path); 5] = [
        (&["fio"], &fio_json),
        (&["fio", "--jobs"], &jobs),
        (&["fio-text"], &fio_text),
        (&["etcd-perf"], &etcd_perf),
        (&["fio", "--target", "ebs-gp3"], &fio_json),
    ];
    let history = || -> Vec<Value> {
        let out = dt(&db)
            .args(["history", "--format", "json"])
            .output()
            .unwrap();
        json(&out)["runs"].as_array().unwrap().clone()
    };
    for (n, (args, file)) in cases.iter().enumerate() {
        let first = dt(&db)
            .arg("import")
            .args(*args)
            .arg(file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&first.stderr);
        assert!(err.contains("saved as run "), "{args:?}: {err}");
        let id = err
            .split("saved as run ")
            .nth(1)
            .unwrap()
            .trim()
            .to_string();
        let again = dt(&db)
            .args(["--format", "json", "import"])
            .args(*args)
            .arg(file)
            .output()
            .unwrap();
        assert_eq!(again.status.code(), first.status.code(), "{args:?}");
        let err = String::from_utf8_lossy(&again.stderr);
        assert!(
            err.contains(&format!(
                "note: not saved again: this import is already stored as run {id} in "
            )) && !err.contains("saved as run"),
            "{args:?}: {err}"
        );
        let doc: Value = serde_json::from_slice(&again.stdout).unwrap();
        assert!(doc.is_object(), "{args:?}");
        assert_eq!(history().len(), n + 1, "{args:?}");
    }
}

/// QA (session 29): `import fio /dev/zero` read 256 MiB (280 MB of memory) before it said
/// "larger than 256 MiB", `/dev/urandom` as much before "not UTF-8": input that is not text is
/// now refused at its first bytes. A directory says so, and a process substitution (a
/// `/dev/fd/N` pipe) is still read whole.
#[test]
fn devices_directories_and_pipes_give_a_clear_answer() {
    let out = import(&[], Path::new("/dev/zero"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/dev/zero is not fio JSON output (it holds a NUL byte (at byte 0)"),
        "{err}"
    );
    let out = import(&[], Path::new("/dev/urandom"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("NUL byte") || err.contains("it is not UTF-8 text (at byte "),
        "{err}"
    );
    let d = tempfile::tempdir().unwrap();
    let out = import(&[], d.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("Is a directory"), "{err}");
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            "\"$0\" --no-save --format json import fio <(cat \"$1\")",
            env!("CARGO_BIN_EXE_disktier"),
        ])
        .arg(fixture("etcd-3.33.json"))
        .output()
        .unwrap();
    let doc = json(&out);
    assert!(doc["results"]["sync"]["ios"].as_u64().unwrap() > 0, "{doc}");
}
