//! Behaviour snapshots of every command, through the real binary: the text and the
//! `--format json` output on fixed inputs, with the exit status, and the help of every
//! subcommand. Deterministic commands (plan, price, catalog, render, import of a checked-in fio
//! JSON and what the store then shows, trace import/stats, simulate) are pinned exactly. Measuring
//! commands (bench, check etcd, assess, trace record, interfere) run on a small directory in
//! /dev/shm, where every fdatasync is fast and so every verdict passes; their figures, ids, paths
//! and host facts are redacted, so the snapshot pins the structure and the wording.
//!
//! These snapshots are the proof that moving code between the CLI and the libraries changes no
//! output: review a changed snapshot as a change of behaviour (`cargo insta review`).

use assert_cmd::Command;
use disktier_testkit::cli::disktier;
use regex::Regex;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The binary with a private store and no catalog overlay from the environment.
fn dt(home: &Path) -> Command {
    let mut c = disktier();
    c.env("DISKTIER_DB", home.join("results.db"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("DISKTIER_RUN_DIR", home.join("run"))
        .env_remove("DISKTIER_CATALOG")
        .env_remove("NO_COLOR")
        .env("COLUMNS", "100");
    c
}

/// Runs `args` and returns the exit status and stdout.
fn run(home: &Path, args: &[&str]) -> (i32, String) {
    let out = dt(home).args(args).output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    if code == 2 || code == -1 {
        eprintln!(
            "{args:?} exited {code}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (code, String::from_utf8(out.stdout).unwrap())
}

/// `exit: N` then the text, as one snapshot.
fn text_of(home: &Path, args: &[&str]) -> String {
    let (code, out) = run(home, args);
    format!("exit: {code}\n{out}")
}

/// `{"exit": N, "stdout": <the JSON>}`; the stdout must be one JSON document.
fn json_of(home: &Path, args: &[&str]) -> Value {
    let mut a = vec!["--format", "json"];
    a.extend_from_slice(args);
    let (code, out) = run(home, &a);
    let v: Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out}"));
    json!({"exit": code, "stdout": v})
}

fn fio_fixture(name: &str) -> String {
    format!("{}/tests/fixtures/fio/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn cachesim_fixture(name: &str) -> String {
    format!(
        "{}/../cachesim/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

// ---- redaction (measuring commands and stored runs) ----

static ID: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b").unwrap());
static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}| UTC)?")
        .unwrap()
});
static DURATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b\d+(\.\d+)? ?(ns|us|ms|s)\b").unwrap());
static SIZE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b\d+(\.\d+)? ?(B|KiB|MiB|GiB|TiB)\b").unwrap());
static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b\d+(\.\d+)?x?\b").unwrap());
/// Work files named with a random suffix (assess's per-run directory).
static WORKFILE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\.disktier-([a-z-]+)-[0-9a-z]+\b").unwrap());
static SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[ \t]+").unwrap());

/// Replaces the temp paths, ids, timestamps, durations, sizes and numbers of `s`, and collapses
/// runs of blanks (column widths follow the figures).
fn redact_text(s: &str, dirs: &[&Path]) -> String {
    let mut s = s.replace(env!("CARGO_MANIFEST_DIR"), "[CRATE]");
    for (i, d) in dirs.iter().enumerate() {
        s = s.replace(d.to_str().unwrap(), &format!("[DIR{i}]"));
    }
    let s = ID.replace_all(&s, "[ID]");
    let s = WORKFILE.replace_all(&s, ".disktier-$1-[RAND]");
    let s = TIMESTAMP.replace_all(&s, "[TIME]");
    let s = DURATION.replace_all(&s, "[DUR]");
    let s = SIZE.replace_all(&s, "[SIZE]");
    let s = NUMBER.replace_all(&s, "[N]");
    let s = SPACES.replace_all(&s, " ");
    s.lines().map(str::trim_end).collect::<Vec<_>>().join("\n")
}

/// Numbers become `"[n]"`, strings are redacted as text, the host's facts are hidden, and an
/// array whose redacted elements are all alike (time series, histogram bins) becomes one element
/// and `"…"`: the document's shape stays, its figures go.
fn redact_json(v: &Value, dirs: &[&Path]) -> Value {
    match v {
        Value::Number(_) => json!("[n]"),
        Value::String(s) => Value::String(redact_text(s, dirs)),
        Value::Array(a) => {
            let r: Vec<Value> = a.iter().map(|e| redact_json(e, dirs)).collect();
            if r.len() >= 2 && r.iter().all(|e| *e == r[0]) {
                json!([r[0].clone(), "…"])
            } else {
                Value::Array(r)
            }
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, e)| {
                    let e = match k.as_str() {
                        "schema_version" => e.clone(),
                        "host" | "hostname" | "kernel" | "cpus" => json!("[host]"),
                        // the directory's device and scheduler differ between machines
                        "device" | "scheduler" | "model" => json!("[dev]"),
                        _ => redact_json(e, dirs),
                    };
                    (k.clone(), e)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A directory on tmpfs (fast fdatasync: every etcd verdict passes), or None outside CI when
/// /dev/shm is missing.
fn shm_dir() -> Option<tempfile::TempDir> {
    let ok = Path::new("/dev/shm").is_dir();
    if !disktier_testkit::require(ok, "/dev/shm (tmpfs)") {
        return None;
    }
    Some(
        tempfile::Builder::new()
            .prefix("dtsnap")
            .tempdir_in("/dev/shm")
            .unwrap(),
    )
}

// ---- help ----

/// The subcommands listed in a help text's `Commands:` section, `help` left out.
fn subcommands(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.starts_with("Commands:") {
            inside = true;
            continue;
        }
        if inside {
            if !line.starts_with(' ') {
                break;
            }
            // a name starts at column 2; wrapped descriptions are indented further
            if line.len() > 2 && !line[2..].starts_with(' ') {
                let name = line.split_whitespace().next().unwrap();
                if name != "help" {
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn help_of_every_command() {
    let home = tempfile::tempdir().unwrap();
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let (code, help) = run(home.path(), &args);
        assert_eq!(code, 0, "{args:?}");
        let name = if path.is_empty() {
            "help".to_string()
        } else {
            format!("help_{}", path.join("_"))
        };
        insta::assert_snapshot!(name, help);
        seen += 1;
        for s in subcommands(&help) {
            let mut p = path.clone();
            p.push(s);
            todo.push(p);
        }
    }
    assert!(
        seen > 30,
        "only {seen} help texts: the Commands: parser broke"
    );
}

// ---- deterministic commands ----

#[test]
fn price_and_plan() {
    let h = tempfile::tempdir().unwrap();
    let h = h.path();
    let plan = disktier_testkit::cli_cases::PLAN_SEED_000;
    insta::assert_snapshot!("plan_text", text_of(h, plan));
    insta::assert_json_snapshot!("plan_json", json_of(h, plan));
    let price = ["price", "instance", "m6id.xlarge", "--region", "us-east-1"];
    insta::assert_snapshot!("price_instance_text", text_of(h, &price));
    insta::assert_json_snapshot!("price_instance_json", json_of(h, &price));
    let bad = ["plan", "--region", "us-east-1", "--capacity", "lots"];
    insta::assert_snapshot!("plan_bad_capacity_text", text_of(h, &bad));
}

#[test]
fn catalog_show_and_check() {
    let h = tempfile::tempdir().unwrap();
    let h = h.path();
    for sub in ["show", "check"] {
        insta::assert_snapshot!(format!("catalog_{sub}_text"), text_of(h, &["catalog", sub]));
        insta::assert_json_snapshot!(format!("catalog_{sub}_json"), json_of(h, &["catalog", sub]));
    }
}

#[test]
fn render_every_platform() {
    let h = tempfile::tempdir().unwrap();
    let h = h.path();
    let cases = disktier_testkit::cli_cases::render_cases();
    for (name, args) in cases {
        let mut a = vec!["render"];
        a.extend(args);
        insta::assert_snapshot!(format!("render_{name}_text"), text_of(h, &a));
        insta::assert_json_snapshot!(format!("render_{name}_json"), json_of(h, &a));
    }
}

/// The stored run's ids and save times are the only things that differ between two runs.
fn stored(v: &Value, dirs: &[&Path]) -> Value {
    fn walk(v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(
                TIMESTAMP
                    .replace_all(&ID.replace_all(s, "[ID]"), "[TIME]")
                    .into_owned(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(walk).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, e)| {
                        let e = match k.as_str() {
                            "saved_at" | "created_at" | "imported_at" => json!("[TIME]"),
                            // simulate and trace report their own speed
                            k if k == "seconds" || k.ends_with("_per_second") => {
                                json!("[timing]")
                            }
                            _ => walk(e),
                        };
                        (k.clone(), e)
                    })
                    .collect(),
            ),
            // 12 significant digits: serde_json's float parsing differs in the last digit
            // with the features a workspace build unifies (float_roundtrip).
            Value::Number(n) if n.is_f64() => {
                let x = n.as_f64().unwrap();
                json!(format!("{x:.12e}").parse::<f64>().unwrap())
            }
            other => other.clone(),
        }
    }
    let s = serde_json::to_string(&walk(v)).unwrap();
    // The checkout's own path (fixtures) differs between clones.
    let mut s = s.replace(env!("CARGO_MANIFEST_DIR"), "[CRATE]");
    for (i, d) in dirs.iter().enumerate() {
        s = s.replace(d.to_str().unwrap(), &format!("[DIR{i}]"));
    }
    serde_json::from_str(&s).unwrap()
}

fn stored_text(s: &str, dirs: &[&Path]) -> String {
    let mut s = s.replace(env!("CARGO_MANIFEST_DIR"), "[CRATE]");
    for (i, d) in dirs.iter().enumerate() {
        s = s.replace(d.to_str().unwrap(), &format!("[DIR{i}]"));
    }
    let s = ID.replace_all(&s, "[ID]");
    TIMESTAMP.replace_all(&s, "[TIME]").into_owned()
}

#[test]
fn import_fio_then_history_show_compare_report() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let dirs = [h];
    let etcd = fio_fixture("etcd-3.33.json");
    let randrw = fio_fixture("randrw-2jobs-3.33.json");
    // one of each output, each saved: the second import of each file names a host, as the
    // same file imported again with the same options is stored once
    // (import_fio_cli::the_same_import_twice_is_stored_once)
    insta::assert_snapshot!(
        "import_fio_etcd_text",
        stored_text(&text_of(h, &["import", "fio", &etcd]), &dirs)
    );
    let first = json_of(h, &["import", "fio", &etcd, "--host", "node-b"]);
    insta::assert_json_snapshot!("import_fio_etcd_json", stored(&first, &dirs));
    let jobs = json_of(h, &["import", "fio", &randrw, "--jobs"]);
    insta::assert_json_snapshot!("import_fio_randrw_jobs_json", stored(&jobs, &dirs));
    insta::assert_snapshot!(
        "import_fio_randrw_jobs_text",
        stored_text(
            &text_of(h, &["import", "fio", &randrw, "--jobs", "--host", "node-b"]),
            &dirs
        )
    );

    let hist = json_of(h, &["history"]);
    let ids: Vec<String> = hist["stdout"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    assert!(ids.len() >= 3, "{hist}");
    insta::assert_json_snapshot!("history_json", stored(&hist, &dirs));
    insta::assert_snapshot!(
        "history_text",
        stored_text(&text_of(h, &["history"]), &dirs)
    );
    let one = ids.last().unwrap().as_str();
    insta::assert_json_snapshot!("show_json", stored(&json_of(h, &["show", one]), &dirs));
    insta::assert_snapshot!("show_text", stored_text(&text_of(h, &["show", one]), &dirs));
    let (a, b) = (ids[ids.len() - 1].as_str(), ids[ids.len() - 2].as_str());
    insta::assert_json_snapshot!(
        "compare_json",
        stored(&json_of(h, &["compare", a, b]), &dirs)
    );
    insta::assert_snapshot!(
        "compare_text",
        stored_text(&text_of(h, &["compare", a, b]), &dirs)
    );
    let html = h.join("report.html");
    let html = html.to_str().unwrap();
    insta::assert_json_snapshot!(
        "report_json",
        stored(&json_of(h, &["report", a, b, "-o", html]), &dirs)
    );
    insta::assert_snapshot!(
        "report_text",
        stored_text(&text_of(h, &["report", a, b, "-o", html]), &dirs)
    );
    insta::assert_snapshot!(
        "store_spool_text",
        stored_text(&text_of(h, &["store", "spool"]), &dirs)
    );
    insta::assert_json_snapshot!(
        "store_spool_json",
        stored(&json_of(h, &["store", "spool"]), &dirs)
    );
}

#[test]
fn trace_import_stats_and_simulate() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let dirs = [h];
    let dtt = h.join("msr.dtt");
    let dtt = dtt.to_str().unwrap();
    let msr = cachesim_fixture("msr.csv");
    let import = ["trace", "import", "msr", &msr, "-o", dtt];
    insta::assert_json_snapshot!("trace_import_json", stored(&json_of(h, &import), &dirs));
    insta::assert_snapshot!(
        "trace_import_text",
        stored_text(&text_of(h, &import), &dirs)
    );
    let stats = ["trace", "stats", dtt];
    insta::assert_json_snapshot!("trace_stats_json", stored(&json_of(h, &stats), &dirs));
    insta::assert_snapshot!("trace_stats_text", stored_text(&text_of(h, &stats), &dirs));
    // QA: `trace describe` (the help's own word for it) was an unknown subcommand.
    let describe = ["trace", "describe", dtt];
    assert_eq!(text_of(h, &describe), text_of(h, &stats));
    let sim = [
        "simulate",
        "--cache-sizes",
        "2MiB,4MiB",
        "--policies",
        "lru,arc,s3fifo,bcache",
        "--trace",
        dtt,
    ];
    insta::assert_json_snapshot!("simulate_json", stored(&json_of(h, &sim), &dirs));
    insta::assert_snapshot!("simulate_text", stored_text(&text_of(h, &sim), &dirs));
    // QA: a trace without writes showed a write hit ratio of 0.0 % and an LRU write miss
    // ratio of 100.0 %; with no write there is no ratio: "-". Blocks A B A C B A: LRU hits 1
    // at 2 blocks, 3 at 3 (hand-computed).
    let csv = h.join("reads.csv");
    let abc = "1,R,0,4096,1\n1,R,4096,4096,2\n1,R,0,4096,3\n1,R,8192,4096,4\n1,R,4096,4096,5\n1,R,0,4096,6\n";
    std::fs::write(&csv, abc).unwrap();
    let reads = h.join("reads.dtt");
    let reads = reads.to_str().unwrap();
    text_of(
        h,
        &[
            "trace",
            "import",
            "alibaba",
            csv.to_str().unwrap(),
            "-o",
            reads,
        ],
    );
    let sim = [
        "simulate",
        "--cache-sizes",
        "8KiB,12KiB",
        "--policies",
        "lru",
        "--trace",
        reads,
    ];
    insta::assert_snapshot!(
        "simulate_reads_only_text",
        stored_text(&text_of(h, &sim), &dirs)
    );
}

// ---- measuring commands: shape and wording ----

/// `verdict_varies`: the verdict itself depends on the machine's load (the etcd-server model's
/// backend commit p99 comes from a few dozen commits), so pass/fail, the exit status and the
/// within/above wording are redacted too.
fn measured_with(name: &str, home: &Path, target: &Path, args: &[&str], verdict_varies: bool) {
    let dirs = [target, home];
    let mut a = vec!["--quiet"];
    a.extend_from_slice(args);
    let loose = |s: String| {
        if verdict_varies {
            VERDICT_WORD
                .replace_all(&s, "[within|above] etcd's guidance")
                .into_owned()
        } else {
            s
        }
    };
    let (code, out) = run(home, &a);
    let code = if verdict_varies && (code == 0 || code == 1) {
        "0|1".to_string()
    } else {
        code.to_string()
    };
    insta::assert_snapshot!(
        format!("{name}_text"),
        loose(format!(
            "exit: {code}\n{}",
            without_doubts(&redact_text(&out, &dirs))
        ))
    );
    let v = json_of(home, &a);
    let mut r = redact_json(&v, &dirs);
    if let Some(rec) = r["stdout"]["recommendation"].as_str() {
        r["stdout"]["recommendation"] = json!(without_doubts(rec));
    }
    r["exit"] = v["exit"].clone();
    if verdict_varies {
        let s = serde_json::to_string(&r).unwrap();
        let s = PASS_FIELD.replace_all(&s, r#""pass":"[pass]""#);
        r = serde_json::from_str(&loose(s.into_owned())).unwrap();
        r["exit"] = json!(code);
    }
    insta::assert_json_snapshot!(format!("{name}_json"), r);
}

/// interfere's doubts about a run (a probe faster beside the writer than alone, a writer done
/// early in the window) and what is ranked because of them follow the machine's noise and speed,
/// not the command's shape: those lines are left out here and checked on fixed figures in
/// interfere's report tests.
fn without_doubts(s: &str) -> String {
    const VARY: [&str; 7] = [
        "Beside the writer, the probe did better",
        // On a busy machine a probe write can block past the heartbeat interval even on tmpfs.
        "The probe's writes themselves",
        "The writer finished early",
        "The writer wrote nothing",
        "Only `none` ran with the aggressor",
        "No scenario could be ranked",
        "No mitigation could be ranked",
    ];
    s.split_inclusive('\n')
        .filter(|l| !VARY.iter().any(|v| l.starts_with(v)))
        .collect()
}

static VERDICT_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(within|above) etcd's guidance").unwrap());
static PASS_FIELD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""(pass|etcd_ready)":(true|false)"#).unwrap());

/// Runs `args` and then a fresh /dev/shm directory (the target, last) in a fresh home; a
/// `HOME/` prefix in `args` names a file in that home.
fn shape(name: &str, args: &[&str], verdict_varies: bool) {
    let Some(t) = shm_dir() else { return };
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let mut a: Vec<String> = args
        .iter()
        .map(|x| x.replace("HOME/", &format!("{h}/")))
        .collect();
    a.push(t.path().to_str().unwrap().to_string());
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    measured_with(name, home.path(), t.path(), &a, verdict_varies);
}

#[test]
fn bench_shape() {
    let job = ["--direct=false", "--size", "4m", "--runtime", "1s"];
    let mut a = vec!["bench", "-p", "write-iops", "--quick"];
    a.extend(job);
    shape("bench_write_iops", &a, false);
}

#[test]
fn check_etcd_shape() {
    shape("check_etcd", &["check", "etcd", "--quick"], false);
}

#[test]
fn check_etcd_server_shape() {
    let a = ["check", "etcd", "--profile", "etcd-server", "--quick"];
    shape("check_etcd_server", &a, true);
}

#[test]
fn assess_shape() {
    // latency needs O_DIRECT, which tmpfs lacks: its failure is part of the shape
    let a = ["assess", "--no-report", "--only", "etcd,latency"];
    shape("assess_etcd_latency", &a, false);
}

#[test]
fn trace_record_shape() {
    let a = [
        "trace",
        "record",
        "-p",
        "etcd",
        "--quick",
        "-o",
        "HOME/rec.dtt",
    ];
    shape("trace_record_etcd", &a, false);
}

#[test]
fn interfere_shape() {
    let a = [
        "interfere",
        "--no-save",
        "--duration",
        "1s",
        "--aggressor-size",
        "64MiB",
    ];
    let mut a = a.to_vec();
    a.extend(["--mitigations", "none"]);
    shape("interfere_none", &a, false);
}

#[test]
fn redaction_keeps_words_and_drops_figures() {
    let d = PathBuf::from("/dev/shm/dtsnapX");
    assert_eq!(
        redact_text(
            "/dev/shm/dtsnapX/f:  p99 1.41 ms,   4 MiB, id 20261124-152039-ff6392 at 2026-11-24T15:21:50Z, 78620 ios",
            &[&d]
        ),
        "[DIR0]/f: p99 [DUR], [SIZE], id [ID] at [TIME], [N] ios"
    );
    assert_eq!(
        redact_json(&json!({"a": [1, 2, 3], "b": [{"x": 1}, {"y": 2}]}), &[]),
        json!({"a": ["[n]", "…"], "b": [{"x": "[n]"}, {"y": "[n]"}]})
    );
}
