//! `--format prometheus` and `--textfile-dir` on the real binary: `promtool check metrics`
//! accepts the output of check, bench and assess; the exposition and the JSON of one run agree;
//! the textfile is written atomically and a bad directory fails before anything is measured;
//! the example alert rules and dashboard in docs/monitoring read metrics the exposition has.
//!
//! promtool comes from Debian's `prometheus` package (scripts/test.sh installs it).

use assert_cmd::Command;
use disktier_testkit::cli::{judged, judged_json, output_with_stdin, Succeeds};
use disktier_testkit::{have, require};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/monitoring");

fn disktier(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_disktier"));
    c.env("DISKTIER_DB", db)
        .env_remove("DISKTIER_CATALOG")
        .env("DISKTIER_TODAY", disktier_testkit::cli::TODAY)
        .env_remove("NODE_NAME");
    c
}

fn promtool() -> bool {
    require(have("promtool"), "promtool (Debian package prometheus)")
}

/// `promtool check metrics` on `text`: no parse error and no lint complaint.
fn promtool_accepts(text: &str) {
    let out = output_with_stdin(
        std::process::Command::new("promtool").args(["check", "metrics"]),
        text,
    );
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics refused it:\n{}{}\n--- exposition:\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One sample: metric name, labels, value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// A small reader of text format 0.0.4 samples (enough for what the encoder writes: quoted
/// label values with \\, \" and \n escapes).
fn samples(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (name, rest) = match line.find('{') {
            Some(i) => (&line[..i], &line[i + 1..]),
            None => {
                let (n, v) = line.split_once(' ').unwrap();
                out.push(Sample {
                    name: n.into(),
                    labels: BTreeMap::new(),
                    value: v.parse().unwrap(),
                });
                continue;
            }
        };
        let mut labels = BTreeMap::new();
        let mut chars = rest.chars().peekable();
        loop {
            let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
            assert_eq!(chars.next(), Some('"'), "{line}");
            let mut val = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        Some('n') => val.push('\n'),
                        Some(o) => val.push(o),
                        None => panic!("{line}"),
                    },
                    '"' => break,
                    o => val.push(o),
                }
            }
            labels.insert(key.trim_start_matches(',').to_string(), val);
            match chars.peek() {
                Some(',') => {
                    chars.next();
                    if chars.peek() == Some(&'}') {
                        chars.next();
                        break;
                    }
                }
                Some('}') => {
                    chars.next();
                    break;
                }
                other => panic!("{line}: {other:?}"),
            }
        }
        let value: String = chars.collect();
        out.push(Sample {
            name: name.into(),
            labels,
            value: value.trim().parse().unwrap(),
        });
    }
    out
}

fn find<'a>(s: &'a [Sample], name: &str, want: &[(&str, &str)]) -> &'a Sample {
    s.iter()
        .find(|x| {
            x.name == name
                && want
                    .iter()
                    .all(|(k, v)| x.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .unwrap_or_else(|| panic!("no {name} with {want:?} in {s:#?}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn tmp() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = d.path().join("results.db");
    (d, db)
}

/// [`tmp`] with an empty `textfile` directory in it (the collector's), and that directory.
fn tmp_textfile() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (d, db) = tmp();
    let prom = d.path().join("textfile");
    std::fs::create_dir_all(&prom).unwrap();
    (d, db, prom)
}

/// [`tmp_textfile`] with an empty target directory `name` too: (dir, store, target, textfile).
fn tmp_target(name: &str) -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let (d, db, prom) = tmp_textfile();
    let target = d.path().join(name);
    std::fs::create_dir_all(&target).unwrap();
    (d, db, target, prom)
}

/// The samples of an exposition `promtool check metrics` accepts.
fn accepted(text: &str) -> Vec<Sample> {
    promtool_accepts(text);
    samples(text)
}

/// Every line of `text` is a comment or a disktier sample: nothing but the exposition.
fn assert_only_exposition(text: &str) {
    assert!(
        text.lines()
            .all(|l| l.starts_with("# ") || l.starts_with("disktier_")),
        "{text}"
    );
}

/// How many entries the directory `p` holds.
fn entries(p: &Path) -> usize {
    std::fs::read_dir(p).unwrap().count()
}

#[test]
fn check_etcd_exposition_passes_promtool_and_carries_the_verdict() {
    if !promtool() {
        return;
    }
    let (d, db) = tmp();
    let out = disktier(&db)
        .args(["check", "etcd"])
        .arg(d.path())
        .args(["--quick", "--format", "prometheus", "--quiet"])
        .env("NODE_NAME", "worker-7")
        .output()
        .unwrap();
    let text = judged(&out);
    let s = accepted(&text);
    let l = [
        ("command", "check"),
        ("node", "worker-7"),
        ("profile", "etcd"),
        ("path", d.path().to_str().unwrap()),
    ];
    let pass = find(
        &s,
        "disktier_verdict_pass",
        &[l[0], l[1], ("verdict", "etcd")],
    );
    assert_eq!(
        pass.value,
        if out.status.code() == Some(0) {
            1.0
        } else {
            0.0
        }
    );
    assert_eq!(pass.labels["path"], l[3].1);
    assert_eq!(
        find(
            &s,
            "disktier_verdict_threshold_seconds",
            &[("verdict", "etcd")]
        )
        .value,
        0.01
    );
    let p99 = find(
        &s,
        "disktier_io_latency_seconds",
        &[l[2], ("direction", "sync"), ("quantile", "0.99")],
    );
    assert!(p99.value > 0.0 && p99.value < 10.0, "{p99:?}");
    let ts = find(&s, "disktier_last_run_timestamp_seconds", &l).value;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(ts <= now + 1.0 && ts > now - 600.0, "{ts} vs {now}");
    // The table and the etcd-perf lines are replaced, not followed, by the exposition.
    assert_only_exposition(&text);
}

#[test]
fn bench_and_assess_expositions_pass_promtool() {
    if !promtool() {
        return;
    }
    let (d, db) = tmp();
    let out = disktier(&db)
        .args(["bench"])
        .arg(d.path())
        .args([
            "--profile",
            "write-iops",
            "--quick",
            "--format",
            "prometheus",
        ])
        .args("--quiet --size 8m --runtime 1s --direct=false".split_whitespace())
        .output()
        .unwrap();
    let text = stdout_of(&out);
    let s = accepted(&text);
    let w = find(
        &s,
        "disktier_io_bytes_per_second",
        &[("command", "bench"), ("direction", "write")],
    );
    assert!(w.value > 0.0);

    let out = disktier(&db)
        .args(["assess"])
        .arg(d.path())
        .args("--only etcd,small-files --no-report --format prometheus -q".split_whitespace())
        .output()
        .unwrap();
    let text = judged(&out);
    let s = accepted(&text);
    // One set of series per run, told apart by profile; the user's path, not the scratch dir.
    let path = d.path().canonicalize().unwrap();
    let path = path.to_str().unwrap();
    find(
        &s,
        "disktier_verdict_pass",
        &[("command", "assess"), ("profile", "etcd"), ("path", path)],
    );
    assert!(
        find(
            &s,
            "disktier_small_files_per_second",
            &[("profile", "small-files")]
        )
        .value
            > 0.0
    );
    assert_eq!(
        s.iter()
            .filter(|x| x.name == "disktier_last_run_timestamp_seconds")
            .count(),
        2
    );
}

#[test]
fn json_and_textfile_of_one_run_agree() {
    let (_d, db, target, prom) = tmp_target("etcd");
    let out = disktier(&db)
        .args(["check", "etcd"])
        .arg(&target)
        .args(["--quick", "--format", "json", "--quiet", "--textfile-dir"])
        .arg(&prom)
        .output()
        .unwrap();
    let doc: Value = judged_json(&out);
    let names: Vec<String> = std::fs::read_dir(&prom)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["disktier_check.prom".to_string()],
        "temp files left"
    );
    let text = std::fs::read_to_string(prom.join("disktier_check.prom")).unwrap();
    if have("promtool") {
        promtool_accepts(&text);
    }
    let s = samples(&text);
    let host = doc["host"]["hostname"].as_str().unwrap();
    let sync = &doc["results"]["sync"];
    for (key, q) in [("50", "0.5"), ("99", "0.99"), ("99.9", "0.999")] {
        let ns = sync["lat_ns"]["percentiles"][key].as_f64().unwrap();
        let got = find(
            &s,
            "disktier_io_latency_seconds",
            &[("direction", "sync"), ("quantile", q), ("node", host)],
        );
        assert!(
            close(got.value, ns / 1e9),
            "p{key}: {} vs {ns} ns",
            got.value
        );
    }
    let count = find(
        &s,
        "disktier_io_latency_seconds_count",
        &[("direction", "sync")],
    );
    assert_eq!(count.value, sync["ios"].as_f64().unwrap());
    let iops = find(
        &s,
        "disktier_io_operations_per_second",
        &[("direction", "write")],
    );
    assert!(close(
        iops.value,
        doc["results"]["write"]["iops"].as_f64().unwrap()
    ));
    for v in doc["verdicts"].as_array().unwrap() {
        let name = v["name"].as_str().unwrap();
        let pass = find(&s, "disktier_verdict_pass", &[("verdict", name)]);
        assert_eq!(pass.value == 1.0, v["pass"].as_bool().unwrap(), "{name}");
    }
    let v0 = &doc["verdicts"][0];
    assert!(close(
        find(&s, "disktier_verdict_value_seconds", &[("verdict", "etcd")]).value,
        v0["value"].as_f64().unwrap() / 1e9
    ));
    assert_eq!(
        find(&s, "disktier_verdict_pass", &[("verdict", "etcd")]).value == 1.0,
        out.status.code() == Some(0)
    );
    // The device label is the document's.
    let dev = doc["target"]["device"].as_str().unwrap_or("");
    assert_eq!(
        find(&s, "disktier_run_duration_seconds", &[]).labels["device"],
        dev
    );
}

#[test]
fn bad_textfile_dir_is_an_error_before_measuring() {
    let (d, db) = tmp();
    let target = d.path().join("etcd");
    std::fs::create_dir_all(&target).unwrap();
    let file = d.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    // /proc refuses new files even to root: a directory that is not writable.
    for (bad, says) in [
        (file.clone(), "not a directory"),
        (d.path().join("missing"), "No such file"),
        (PathBuf::from("/proc"), "cannot create a file"),
    ] {
        let t0 = std::time::Instant::now();
        let out = disktier(&db)
            .args(["check", "etcd"])
            .arg(&target)
            .arg("--textfile-dir")
            .arg(&bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.starts_with("error: --textfile-dir "), "{err}");
        assert!(
            err.contains(says) && err.contains(bad.to_str().unwrap()),
            "{err}"
        );
        assert!(out.stdout.is_empty());
        // Nothing was measured: no test file was ever created and no run was saved.
        assert_eq!(entries(&target), 0);
        assert!(!db.exists());
        assert!(t0.elapsed().as_secs() < 5);
    }
}

#[test]
fn prometheus_format_is_refused_where_there_is_nothing_to_export() {
    let (_d, db) = tmp();
    for args in [
        &["price", "gp3", "--size", "100GiB", "--format", "prometheus"][..],
        &["history", "--textfile-dir", "/tmp"][..],
    ] {
        let out = disktier(&db).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("check, bench, assess and fleet run"), "{err}");
    }
}

#[test]
fn example_alert_rules_pass_promtool() {
    if !promtool() {
        return;
    }
    for args in [
        &["check", "rules", "disktier-alerts.yml"][..],
        &["test", "rules", "disktier-alerts.test.yml"][..],
    ] {
        let out = std::process::Command::new("promtool")
            .args(args)
            .current_dir(DOCS)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Every metric the alert rules and the dashboard query is one the exposition has: a rename
/// in the exporter cannot leave them reading nothing.
#[test]
fn alerts_and_dashboard_query_exported_metrics() {
    let exporter = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/exposition/encode.rs"
    ))
    .unwrap();
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(DOCS).join("disktier-dashboard.json")).unwrap(),
    )
    .unwrap();
    let mut exprs: Vec<String> = dash["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().clone())
        .map(|t| t["expr"].as_str().unwrap().to_string())
        .collect();
    assert!(exprs.len() >= 5);
    exprs.push(std::fs::read_to_string(Path::new(DOCS).join("disktier-alerts.yml")).unwrap());
    for e in exprs {
        let mut found = 0;
        for word in e.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if let Some(base) = word.strip_prefix("disktier_") {
                let base = base.trim_end_matches("_count").trim_end_matches("_sum");
                assert!(
                    exporter.contains(&format!("\"disktier_{base}\"")),
                    "{word} is not exported (in {e})"
                );
                found += 1;
            }
        }
        assert!(found > 0, "{e} reads no disktier metric");
    }
}

/// Regression (QA): the textfile took its mode from the umask, so after a run under `umask 077`
/// (a root cron job's) node_exporter, running as another user, could no longer read the file it
/// had read before; and a symlink at the file's name is replaced, not written through.
#[test]
fn the_textfile_is_0644_whatever_the_umask_and_replaces_a_symlink() {
    use std::os::unix::fs::PermissionsExt;
    let (d, db, target, prom) = tmp_target("t");
    let victim = d.path().join("victim.txt");
    std::fs::write(&victim, "victim content").unwrap();
    let file = prom.join("disktier_bench.prom");
    std::os::unix::fs::symlink(&victim, &file).unwrap();
    std::process::Command::new("sh")
        .args(["-c", "umask 077; exec \"$@\"", "sh"])
        .arg(env!("CARGO_BIN_EXE_disktier"))
        .env("DISKTIER_DB", &db)
        .args(["--no-save", "--quiet", "bench"])
        .arg(&target)
        .args(["--rw", "write", "--size", "4m", "--runtime", "1s"])
        .arg("--textfile-dir")
        .arg(&prom)
        .stdout_ok();
    let md = std::fs::symlink_metadata(&file).unwrap();
    assert!(md.file_type().is_file(), "still a symlink");
    assert_eq!(md.permissions().mode() & 0o777, 0o644);
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("disktier_run_duration_seconds"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim content");
    assert_eq!(entries(&prom), 1, "temp files left");
}

/// Ctrl-C during a run: the partial exposition may be printed, but the textfile the collector
/// serves keeps the last complete run (here: none), and no temporary file is left.
#[test]
fn an_interrupted_run_is_not_written_to_the_textfile() {
    let (_d, db, target, prom) = tmp_target("t");
    let out = disktier_testkit::cli::interrupted_after(
        std::process::Command::new(env!("CARGO_BIN_EXE_disktier"))
            .env("DISKTIER_DB", &db)
            .args(["--no-save", "--quiet", "--format", "prometheus", "bench"])
            .arg(&target)
            .args("--rw write --size 4m --runtime 30s --time-based".split_whitespace())
            .arg("--textfile-dir")
            .arg(&prom),
        std::time::Duration::from_millis(1500),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert_eq!(entries(&prom), 0, "a file was written");
}

/// QA: `--format prometheus` with `--repeat N` printed the text table (promtool failed) and
/// `--textfile-dir` wrote nothing, both exiting 0. Every run is exported with a `run` label,
/// and the aggregate as `disktier_repeat_*`; the textfile holds the same text.
#[test]
fn repeat_exports_every_run_and_the_aggregate() {
    if !promtool() {
        return;
    }
    let (_d, db, target, prom) = tmp_target("etcd");
    let out = disktier(&db)
        .args(["--no-save", "check", "etcd"])
        .arg(&target)
        .args("--quick --size 1m --repeat 2 --format prometheus -q".split_whitespace())
        .arg("--textfile-dir")
        .arg(&prom)
        .output()
        .unwrap();
    let text = judged(&out);
    promtool_accepts(&text);
    assert_only_exposition(&text);
    let s = samples(&text);
    for run in ["1", "2"] {
        let p99 = find(
            &s,
            "disktier_io_latency_seconds",
            &[("run", run), ("direction", "sync"), ("quantile", "0.99")],
        );
        assert!(p99.value > 0.0);
        find(
            &s,
            "disktier_verdict_pass",
            &[("run", run), ("verdict", "etcd")],
        );
    }
    assert_eq!(
        find(&s, "disktier_repeat_runs", &[("command", "check")]).value,
        2.0
    );
    let median = find(
        &s,
        "disktier_repeat_p99_seconds",
        &[("metric", "sync.p99"), ("stat", "median")],
    );
    assert!(!median.labels.contains_key("run"));
    let passed = find(&s, "disktier_repeat_passed_runs", &[]).value;
    assert_eq!(passed == 2.0, out.status.code() == Some(0));
    let file = std::fs::read_to_string(prom.join("disktier_check.prom")).unwrap();
    assert_eq!(file, text);

    // bench --repeat: the same, without a verdict.
    let out = disktier(&db)
        .args(["--no-save", "bench"])
        .arg(&target)
        .args("--rw write --size 256k --repeat 2 -q --textfile-dir".split_whitespace())
        .arg(&prom)
        .output()
        .unwrap();
    stdout_of(&out);
    let text = std::fs::read_to_string(prom.join("disktier_bench.prom")).unwrap();
    let s = accepted(&text);
    find(
        &s,
        "disktier_io_operations_per_second",
        &[("run", "2"), ("direction", "write")],
    );
    assert!(!s.iter().any(|x| x.name == "disktier_repeat_passed_runs"));
}

/// QA: `bench FILE.fio --format prometheus` printed the tables, `--textfile-dir` wrote nothing.
/// Every job is exported, labelled with its name and its place in the file.
#[test]
fn a_job_file_exports_every_job() {
    if !promtool() {
        return;
    }
    let (d, db, prom) = tmp_textfile();
    let jobs = d.path().join("cmp.fio");
    std::fs::write(
        &jobs,
        format!(
            "[global]\ndirectory={}\nsize=512k\nbs=4k\n[etcd]\nrw=write\nioengine=sync\nfdatasync=1\n[readers]\nstonewall\nrw=randread\nnumjobs=2\n",
            d.path().display()
        ),
    )
    .unwrap();
    let out = disktier(&db)
        .args(["--no-save", "--format", "prometheus", "-q", "bench"])
        .arg(&jobs)
        .arg("--textfile-dir")
        .arg(&prom)
        .output()
        .unwrap();
    let text = stdout_of(&out);
    let s = accepted(&text);
    let path = d.path().canonicalize().unwrap();
    let path = path.to_str().unwrap();
    let w = find(
        &s,
        "disktier_io_operations_per_second",
        &[
            ("job", "etcd"),
            ("job_index", "0"),
            ("direction", "sync"),
            ("path", path),
        ],
    );
    assert!(w.value > 0.0);
    find(
        &s,
        "disktier_io_bytes_per_second",
        &[("job", "readers"), ("direction", "read")],
    );
    assert_eq!(
        std::fs::read_to_string(prom.join("disktier_bench.prom")).unwrap(),
        text
    );
}

/// QA: the `path` label (and the stored target) was the path as typed (`path="etcdtest"`),
/// where assess names its absolute path; both are the canonical absolute path now.
#[test]
fn the_path_label_is_the_canonical_absolute_path() {
    let (d, db) = tmp();
    std::fs::create_dir_all(d.path().join("etcdtest")).unwrap();
    let out = disktier(&db)
        .current_dir(d.path())
        .args("bench etcdtest/../etcdtest --rw write --size 256k".split_whitespace())
        .args(["--format", "prometheus", "-q"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    let want = d.path().canonicalize().unwrap().join("etcdtest");
    let s = samples(&text);
    let dur = find(&s, "disktier_run_duration_seconds", &[]);
    assert_eq!(dur.labels["path"], want.to_str().unwrap());
    let doc: Value = serde_json::from_slice(
        &disktier(&db)
            .args(["history", "--format", "json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(doc["runs"][0]["target"], want.to_str().unwrap(), "{doc:#}");
}

/// stdout of a run that must have succeeded.
fn stdout_of(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// QA: a textfile that could not be written (a full directory; here the file's name is taken
/// by a directory, so the rename fails) failed the command before it printed anything: stdout
/// was empty, `check etcd`'s verdict was only in the store, and with `--no-save` (the cron
/// line of docs/monitoring.md) the run was lost. The result is printed all the same, and the
/// error (exit 2) names the file.
#[test]
fn a_textfile_that_cannot_be_written_does_not_keep_the_run_off_stdout() {
    let (_d, db, target, prom) = tmp_target("t");
    for command in ["bench", "check"] {
        std::fs::create_dir_all(prom.join(format!("disktier_{command}.prom/x"))).unwrap();
    }
    let out = disktier(&db)
        .args(["--no-save", "--format", "json", "bench"])
        .arg(&target)
        .args(["--rw", "write", "--size", "64k", "--textfile-dir"])
        .arg(&prom)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot write") && err.contains("disktier_bench.prom"),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("the result on stdout");
    assert_eq!(doc["results"]["write"]["ios"], 16, "{doc:#}");
    let out = disktier(&db)
        .args(["--no-save", "check", "etcd"])
        .arg(&target)
        .args(["--quick", "--size", "256k", "--textfile-dir"])
        .arg(&prom)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("disktier_check.prom"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("99th percentile of fsync is "), "{text}");
    // No temporary file is left beside the two directories.
    assert_eq!(entries(&prom), 2);
    assert_eq!(entries(&target), 0);
}
