//! `disktier report`: a report from real runs opened in headless Chromium (no console messages,
//! no network requests, charts present, a hostile target name shown as text, a screenshot kept
//! under `$CARGO_TARGET_TMPDIR/test-artifacts/`), and the `--plan` section.

use disktier_store::{NewRun, Store};
use disktier_testkit::cli::assert_any_starts_with;
use disktier_testkit::cli::disktier_at as dt;
use disktier_testkit::cli::store_fixture as fixture;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

const XSS: &str = "<script>alert(1)</script>";

fn artifacts() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-artifacts");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// What one headless Chromium load of `page` showed.
struct Load {
    dom: String,
    console: Vec<String>,
    /// URLs the page itself asked the network for (Chromium's own background requests, which
    /// carry no file:// isolation key, are not the page's doing).
    requests: Vec<String>,
}

fn chromium(args: &[&str], profile: &Path) -> std::process::Output {
    std::process::Command::new("chromium")
        .args("--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync --no-first-run --hide-scrollbars".split_whitespace())
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("cannot run chromium")
}

fn load(page: &Path) -> Load {
    let tmp = tempfile::tempdir().unwrap();
    let netlog = tmp.path().join("netlog.json");
    let out = chromium(
        &[
            "--enable-logging=stderr",
            "--v=0",
            &format!("--log-net-log={}", netlog.display()),
            "--dump-dom",
            &format!("file://{}", page.display()),
        ],
        &tmp.path().join("profile"),
    );
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    let log: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&netlog).unwrap())
        .expect("chromium's net log is JSON");
    let mut requests = Vec::new();
    for e in log["events"].as_array().unwrap() {
        let p = &e["params"];
        let from_page = p["network_isolation_key"]
            .as_str()
            .is_some_and(|k| k.contains("file://"));
        if let (true, Some(url)) = (from_page, p["url"].as_str()) {
            requests.push(url.to_string());
        }
    }
    Load {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console,
        requests,
    }
}

fn have_chromium() -> bool {
    disktier_testkit::require(
        disktier_testkit::have("chromium"),
        "chromium (Debian package chromium)",
    )
}

#[test]
fn report_from_real_runs_is_clean_in_chromium() {
    if !have_chromium() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    // A target whose name is markup: it must reach the page as text.
    let hostile = d.path().join(XSS);
    let plain = d.path().join("plain");
    std::fs::create_dir_all(&hostile).unwrap();
    std::fs::create_dir_all(&plain).unwrap();
    dt(&db)
        .arg("bench")
        .arg(&hostile)
        .args(["--profile", "etcd", "--quick", "--size", "1m", "--quiet"])
        .assert()
        .success();
    dt(&db)
        .arg("bench")
        .arg(&plain)
        .args(
            "--rw randread --bs 4k --size 16m --runtime 2s --time-based --quiet".split_whitespace(),
        )
        .assert()
        .success();
    let page = artifacts().join("report-real-runs.html");
    dt(&db).args(["report", "-o"]).arg(&page).assert().success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script"), "the report holds a script tag");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));

    let l = load(&page);
    assert!(l.console.is_empty(), "console messages: {:#?}", l.console);
    assert!(
        l.requests.is_empty(),
        "the page made network requests: {:#?}",
        l.requests
    );
    assert!(
        l.dom.matches("<svg").count() >= 4,
        "charts missing from the rendered page"
    );
    assert!(
        l.dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "the hostile name is not shown as text"
    );
    assert!(!l.dom.contains(XSS), "the hostile name became markup");

    let shot = artifacts().join("report-real-runs.png");
    let tmp = tempfile::tempdir().unwrap();
    let out = chromium(
        &[
            "--window-size=1280,2600",
            &format!("--screenshot={}", shot.display()),
            &format!("file://{}", page.display()),
        ],
        tmp.path(),
    );
    assert!(out.status.success());
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 20_000,
        "screenshot too small to show a report"
    );
}

/// The harness itself: a page that does log and fetch is caught, so a clean report means clean.
#[test]
fn chromium_harness_sees_console_errors_and_requests() {
    if !have_chromium() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let page = d.path().join("control.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><p>x</p><img src=\"http://127.0.0.1:9/x.png\"><script>console.error('control-error')</script>",
    )
    .unwrap();
    let l = load(&page);
    assert!(
        l.console.iter().any(|c| c.contains("control-error")),
        "{:?}",
        l.console
    );
    assert_any_starts_with(&l.requests, "http://127.0.0.1:9/");
}

#[test]
fn plan_section_shows_cost_beside_measurements() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let mut s = Store::open(Some(db.to_str().unwrap())).unwrap();
    let [a, b] = [("bench", "read-iops"), ("check", "ocp-recipe-ebs")].map(|(kind, name)| {
        s.save(&NewRun {
            kind,
            group_id: None,
            doc: &fixture(name),
        })
        .unwrap()
    });
    let fixture_plan =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../store/tests/fixtures/plan.json");
    // With a note, as `plan` writes them (QA: the report dropped the plan's notes).
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture_plan).unwrap()).unwrap();
    doc["notes"] =
        serde_json::json!(["The quoted <b>$948.94</b>/month is 5 x the 1,024 GiB price"]);
    let plan = d.path().join("plan.json");
    std::fs::write(&plan, doc.to_string()).unwrap();
    let out = d.path().join("r.html");
    dt(&db)
        .args(["report", &a, &b, "--plan"])
        .arg(&plan)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    let plan_part = &html[html.find("<section id=\"plan\">").expect("a plan section")..];
    for want in [
        "us-east-1",
        "$66.14",
        "gp3 200 GiB",
        "Measured here",
        "/mnt/scratch",
        "&lt;b&gt;escaped&lt;/b&gt;",
        "<div class=\"note\">The quoted &lt;b&gt;$948.94&lt;/b&gt;/month is 5 x",
    ] {
        assert!(plan_part.contains(want), "plan section lacks {want}");
    }
    // Not a plan: a clear error naming the file.
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, "{\"schema_version\":1}").unwrap();
    dt(&db)
        .args(["report", &a, "--plan"])
        .arg(&bad)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "not a `disktier plan --format json` document",
        ));
}

/// Regression (QA): `--plan` read the whole file into memory, so `--plan /dev/zero` (or any
/// endless device or stream) grew until memory ran out (3 GiB in 5 s). A plan is read up to 16
/// MiB, and anything longer is refused at once, naming the file; a pipe is still read.
#[test]
fn an_endless_plan_is_refused_not_read_into_memory() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let mut s = Store::open(Some(db.to_str().unwrap())).unwrap();
    let a = s
        .save(&NewRun {
            kind: "bench",
            group_id: None,
            doc: &fixture("read-iops"),
        })
        .unwrap();
    let out = d.path().join("r.html");
    dt(&db)
        .args(["report", &a, "--plan", "/dev/zero", "-o"])
        .arg(&out)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "/dev/zero is larger than 16 MiB, which no plan is",
        ));
    assert!(!out.exists());
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("../store/tests/fixtures/plan.json");
    dt(&db)
        .args(["report", &a, "--plan", "/dev/stdin", "-o"])
        .arg(&out)
        .pipe_stdin(&plan)
        .unwrap()
        .assert()
        .success();
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("<section id=\"plan\">"));
    // QA: a forged monthly cost of 1e308 was drawn as a 309-digit dollar figure.
    let mut forged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    forged["options"][1]["monthly_cost_usd"] = 1e308.into();
    let forged_path = d.path().join("forged.json");
    std::fs::write(&forged_path, forged.to_string()).unwrap();
    dt(&db)
        .args(["report", &a, "--plan"])
        .arg(&forged_path)
        .arg("-o")
        .arg(d.path().join("f.html"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "holds 1e308 at options[1].monthly_cost_usd, a figure no plan has",
        ));
    assert!(!d.path().join("f.html").exists());
}

#[test]
fn report_of_an_empty_store_says_what_to_run() {
    let d = tempfile::tempdir().unwrap();
    dt(&d.path().join("r.db"))
        .args(["report", "-o"])
        .arg(d.path().join("x.html"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("disktier assess"));
}

#[test]
fn report_replaces_only_a_report() {
    // Found by QA: `report -o` naming the result store replaced every stored run with HTML.
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let mut s = Store::open(Some(db.to_str().unwrap())).unwrap();
    let id = s
        .save(&NewRun {
            kind: "bench",
            group_id: None,
            doc: &fixture("read-iops"),
        })
        .unwrap();
    drop(s);
    let store_before = std::fs::read(&db).unwrap();
    let config = d.path().join("fstab");
    std::fs::write(&config, "/dev/vdb /data xfs defaults 0 0\n").unwrap();
    for victim in [&db, &config] {
        dt(&db)
            .args(["report", "-o"])
            .arg(victim)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is not a disktier report"));
    }
    assert_eq!(std::fs::read(&db).unwrap(), store_before);
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "/dev/vdb /data xfs defaults 0 0\n"
    );
    // The store still reads, and a report it wrote is replaced on the next run.
    dt(&db).args(["show", &id]).assert().success();
    let page = d.path().join("r.html");
    for _ in 0..2 {
        dt(&db).args(["report", "-o"]).arg(&page).assert().success();
    }
    // An empty file holds nothing to lose.
    let empty = d.path().join("empty.html");
    std::fs::write(&empty, "").unwrap();
    dt(&db)
        .args(["report", "-o"])
        .arg(&empty)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&empty)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    // QA: a file of procfs reads as empty, and its directory takes no new file: that is what
    // is said, not "the directory /proc does not exist".
    let out = dt(&db)
        .args(["report", "-o", "/proc/version"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(
        err.contains("cannot create a temporary file in /proc (No such file or directory"),
        "{err}"
    );
    assert!(!err.contains("does not exist"), "{err}");
}

/// QA (session 15): `-o -` made a file named "-", `--last 0` and an unknown `--group` said
/// "no runs were selected (run `disktier assess` ...)" of a store full of runs, a run named
/// twice was drawn twice, "(1 runs)", and an ambiguous prefix gave a count of at most 2.
#[test]
fn report_selection_says_what_it_did() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let mut s = Store::open(Some(db.to_str().unwrap())).unwrap();
    let ids: Vec<String> = ["read-iops", "ocp-recipe-ebs", "quick-etcd"]
        .iter()
        .map(|name| {
            s.save(&NewRun {
                kind: "bench",
                group_id: None,
                doc: &fixture(name),
            })
            .unwrap()
        })
        .collect();
    drop(s);
    let out = dt(&db)
        .current_dir(d.path())
        .args(["report", "-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("<!DOCTYPE html>"));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("wrote the report of 3 runs to standard output"));
    assert!(!d.path().join("-").exists());
    dt(&db)
        .args(["report", "--last", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("0 is not in 1.."));
    dt(&db)
        .args(["report", "--group", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run is in group nope"));
    // QA: a newline in the group split the error's line in two; an empty one was looked for.
    dt(&db)
        .args(["report", "--group", "a\nb"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: no run is in group a\\nb: give the id",
        ));
    dt(&db)
        .args(["report", "--group", ""])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "a value is required for '--group <ASSESS_ID>'",
        ));
    let html = d.path().join("r.html");
    dt(&db)
        .args(["report", &ids[0], &ids[0], "-o"])
        .arg(&html)
        .assert()
        .success()
        .stdout(predicate::str::contains("(1 run)"))
        .stderr(predicate::str::contains(
            "is named more than once: it is drawn once",
        ));
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("<p>1 run on 1 target"));
    // A newline in the file's name does not split the line that names it.
    dt(&db)
        .args(["report", &ids[0], "-o"])
        .arg(d.path().join("a\nb.html"))
        .assert()
        .success()
        .stdout(predicate::str::contains("a\\nb.html (1 run)\n"));
    // Every id starts with the year: the message names the first two runs, not a count.
    let mut sorted = ids.clone();
    sorted.sort();
    dt(&db)
        .args(["report", &ids[0][..2], "-o"])
        .arg(&html)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "run id {} is ambiguous: {}, {} and maybe more start with it",
            &ids[0][..2],
            sorted[0],
            sorted[1]
        )));
}
