//! `history`, `show` and `compare` through the real binary, against a store filled with fixture
//! documents (the OpenShift instance-disk recipe's two etcd results); store refusals as the user
//! sees them; and many `disktier import` processes saving at once.

use disktier_store::{NewRun, Store};
use disktier_testkit::cli::disktier;
use disktier_testkit::cli::disktier_at as dt;
use disktier_testkit::cli::stdout_ok;
use disktier_testkit::cli::store_fixture as fixture;
use disktier_testkit::pg::Schema;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

/// Saves the named fixtures in the store at `location`, each as a run of its kind; returns
/// their ids.
fn save_runs(location: &str, runs: &[(&str, &str)]) -> Vec<String> {
    let mut s = Store::open(Some(location)).unwrap();
    runs.iter()
        .map(|(kind, n)| {
            s.save(&NewRun {
                kind,
                group_id: None,
                doc: &fixture(n),
            })
            .unwrap()
        })
        .collect()
}

/// Saves the named fixtures in the store at `location` as `check` runs; returns their ids.
fn save_checks(location: &str, names: &[&str]) -> Vec<String> {
    let runs: Vec<_> = names.iter().map(|n| ("check", *n)).collect();
    save_runs(location, &runs)
}

/// A fresh schema `cli_...` on the test PostgreSQL server; `None` (skipped) without one.
fn fresh_schema() -> Option<Schema> {
    disktier_testkit::pg::fresh_schema("cli", &disktier_store::new_id())
}

/// A temp store holding the named fixtures; returns the dir guard, the db path and the ids.
fn store_with(names: &[&str]) -> (tempfile::TempDir, PathBuf, Vec<String>) {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let ids = save_checks(db.to_str().unwrap(), names);
    (d, db, ids)
}

#[test]
fn history_lists_and_filters() {
    let (_d, db, ids) = store_with(&["ocp-recipe-ephemeral", "ocp-recipe-ebs", "read-iops"]);
    let out = dt(&db)
        .args(["history", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["runs"].as_array().unwrap().len(), 3);
    assert_eq!(v["runs"][0]["id"], ids[2].as_str(), "newest first");
    let out = dt(&db)
        .args(["history", "--profile", "etcd", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    // --last 0 is refused, as report's is (QA: it listed nothing and said no run matched).
    dt(&db)
        .args(["history", "--last", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("0 is not in 1.."));
    dt(&db)
        .args(["history", "--target", "/var/lib/misc/_benchmark_fio"])
        .assert()
        .success()
        .stdout(predicate::str::contains(ids[1].as_str()).and(predicate::str::contains("4.05 ms")))
        .stdout(predicate::str::contains(ids[0].as_str()).not());
}

#[test]
fn show_prints_a_summary_or_the_stored_document() {
    let (_d, db, ids) = store_with(&["ocp-recipe-ephemeral"]);
    dt(&db)
        .args(["show", &ids[0]])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "/var/lib/containers/_benchmark_fio",
        ))
        .stdout(predicate::str::contains("PASS etcd"));
    let out = dt(&db)
        .args(["show", &ids[0], "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v, fixture("ocp-recipe-ephemeral"));
    dt(&db)
        .args(["show", "no-such-run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("disktier history"));
}

#[test]
fn compare_golden() {
    let (_d, db, ids) = store_with(&["ocp-recipe-ephemeral", "ocp-recipe-ebs"]);
    let out = dt(&db)
        .args(["compare", &ids[0], &ids[1]])
        .output()
        .unwrap();
    stdout_ok(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("fdatasync p99 0.204 ms vs 4.05 ms: 19.9x lower"),
        "{text}"
    );
    let text = text.replace(&ids[0], "RUN_A").replace(&ids[1], "RUN_B");
    insta::assert_snapshot!("compare_ocp_recipe", text);
}

#[test]
fn compare_refuses_different_profiles_unless_forced() {
    let (_d, db, ids) = store_with(&["ocp-recipe-ephemeral", "read-iops"]);
    dt(&db)
        .args(["compare", &ids[0], &ids[1]])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("different profiles").and(predicate::str::contains("--force")),
        );
    dt(&db)
        .args(["compare", &ids[0], &ids[1], "--force", "--format", "json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\"notes\""));
}

#[test]
fn compare_flags_quick_beside_full() {
    let (_d, db, ids) = store_with(&["ocp-recipe-ebs", "quick-etcd"]);
    dt(&db)
        .args(["compare", &ids[0], &ids[1]])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "note: quick and full runs are mixed (B quick)",
        ));
}

#[test]
fn a_corrupted_store_is_refused_and_untouched() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    std::fs::write(
        &db,
        b"this is not a database, and it must survive a disktier run".repeat(200),
    )
    .unwrap();
    let before = std::fs::read(&db).unwrap();
    dt(&db)
        .args(["history"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is not a disktier database or is corrupted: move it aside or pass --db",
        ));
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn ten_import_processes_at_once_lose_no_row() {
    let fio = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/etcd-3.33.json");
    if !disktier_testkit::require(
        fio.exists(),
        "the fio JSON fixture tests/fixtures/fio/etcd-3.33.json",
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("shared.db");
    let bin = assert_cmd::cargo::cargo_bin("disktier");
    // Each with its own target: the same import twice is stored once
    // (import_fio_cli::the_same_import_twice_is_stored_once).
    let children: Vec<_> = (0..10)
        .map(|i| {
            std::process::Command::new(&bin)
                .args(["import", "fio"])
                .arg(&fio)
                .args(["--target", &format!("/data/{i}")])
                .args(["--format", "json", "--quiet"])
                .env("DISKTIER_DB", &db)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        stdout_ok(&out);
    }
    let rows = Store::open(Some(db.to_str().unwrap()))
        .unwrap()
        .list(&Default::default())
        .unwrap();
    assert_eq!(rows.len(), 10);
    assert!(rows.iter().all(|r| r.kind == "import"));
}

#[test]
fn the_same_commands_work_against_postgres() {
    let Some(Schema { url, .. }) = fresh_schema() else {
        return;
    };
    let ids = save_checks(&url, &["ocp-recipe-ephemeral", "ocp-recipe-ebs"]);
    let mut c = disktier();
    c.env_remove("DISKTIER_DB")
        .args(["--db", &url, "compare", &ids[0], &ids[1]])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "fdatasync p99 0.204 ms vs 4.05 ms: 19.9x lower",
        ));
    let out = disktier()
        .env("DISKTIER_DB", &url)
        .args(["history", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
}

/// Regression (QA): `history --db /tmp/x/newdir/sub/none.db` silently created the directories
/// and an empty store. No reading command creates a store; each says there is none.
#[test]
fn reading_commands_create_no_store() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("newdir/sub/none.db");
    let cases: [&[&str]; 4] = [
        &["history"],
        &["show", "20231201-201522-a3f90c"],
        &[
            "compare",
            "20231201-201522-a3f90c",
            "20231201-201522-a3f90d",
        ],
        &["report", "-o", "r.html"],
    ];
    for args in cases {
        dt(&db)
            .current_dir(d.path())
            .args(args)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains("there is no result store at")
                    .and(predicate::str::contains("none.db"))
                    .and(predicate::str::contains("--no-save").not()),
            );
        assert!(!d.path().join("newdir").exists(), "{args:?} created it");
    }
}

/// Regression (QA): `history --kind bogus` silently listed nothing.
#[test]
fn history_refuses_an_unknown_kind() {
    let (_d, db, _) = store_with(&["ocp-recipe-ebs"]);
    dt(&db)
        .args(["history", "--kind", "bogus"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("\"bogus\" is not a kind of run").and(
                predicate::str::contains("bench, check, assess, import, interfere"),
            ),
        );
    dt(&db)
        .args(["history", "--kind", "check", "--format", "json"])
        .assert()
        .success();
}

/// Regression (QA): `history --target /abs/path` and `--target ./bd` did not find the run
/// stored (by an older disktier) with the target `bd`, relative as typed.
#[test]
fn a_target_matches_however_it_is_typed() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("bd")).unwrap();
    let abs = std::fs::canonicalize(d.path().join("bd")).unwrap();
    let db = d.path().join("r.db");
    let mut s = Store::open(Some(db.to_str().unwrap())).unwrap();
    let mut ids = Vec::new();
    for target in ["bd", abs.to_str().unwrap(), "elsewhere"] {
        let mut doc = fixture("ocp-recipe-ebs");
        doc["target"]["path"] = target.into();
        ids.push(
            s.save(&NewRun {
                kind: "check",
                group_id: None,
                doc: &doc,
            })
            .unwrap(),
        );
    }
    for arg in ["bd", "./bd", "bd/", abs.to_str().unwrap()] {
        let out = dt(&db)
            .current_dir(d.path())
            .args(["history", "--format", "json", "--target", arg])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut got: Vec<&str> = v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        got.sort();
        let mut want = vec![ids[0].as_str(), ids[1].as_str()];
        want.sort();
        assert_eq!(got, want, "--target {arg}");
    }
}

/// Regression (QA): `compare` of an interfere run said "is a interfere run, not a benchmark
/// result: ... invalid type: string ..., expected struct TargetInfo", and of a damaged bench
/// document "is a bench run, not a benchmark result". Each says what the run is.
#[test]
fn compare_says_what_a_run_it_cannot_compare_is() {
    let (_d, db, ids) = store_with(&["ocp-recipe-ebs"]);
    let mut s = Store::open(Some(db.to_str().unwrap())).unwrap();
    let interfere = s
        .save(&NewRun {
            kind: "interfere",
            group_id: None,
            doc: &fixture("interfere"),
        })
        .unwrap();
    let junk = s
        .save(&NewRun {
            kind: "bench",
            group_id: None,
            doc: &serde_json::json!({"schema_version": 1, "profile": "etcd", "junk": true}),
        })
        .unwrap();
    let err = dt(&db)
        .args(["compare", &ids[0], &interfere])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(err).unwrap();
    assert!(
        err.contains(&format!("run {interfere} is an interfere run, and compare takes benchmark runs (bench, check, assess, import)")),
        "{err}"
    );
    assert!(
        !err.contains("expected struct") && !err.contains("invalid type"),
        "{err}"
    );
    dt(&db)
        .args(["compare", &ids[0], &junk])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains(format!("run {junk} (a bench run) cannot be compared"))
                .and(predicate::str::contains("stored document is unreadable")),
        );
}

/// Regression (QA): `show` of an interfere run printed raw JSON; it prints the table and the
/// recommendation, as `interfere` does.
#[test]
fn show_prints_an_interfere_run_as_its_table() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let id = Store::open(Some(db.to_str().unwrap()))
        .unwrap()
        .save(&NewRun {
            kind: "interfere",
            group_id: None,
            doc: &fixture("interfere"),
        })
        .unwrap();
    let out = dt(&db).args(["show", &id]).output().unwrap();
    let text = stdout_ok(&out);
    assert!(text.contains("kind     interfere"), "{text}");
    assert!(
        text.contains("fdatasync latency of the etcd probe"),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("dd/none")), "{text}");
    assert!(!text.contains("\"scenarios\""), "raw JSON: {text}");
}

/// Regression (QA): `store spool` printed a spooled run's reason raw, escape sequences
/// included (a PostgreSQL server's message can carry them); they are shown escaped.
#[test]
fn store_spool_shows_control_characters_escaped() {
    let data = tempfile::tempdir().unwrap();
    let spool = disktier_store::spool::Spool::at(data.path().join("disktier/spool"));
    spool
        .put(
            &NewRun {
                kind: "check",
                group_id: None,
                doc: &fixture("ocp-recipe-ebs"),
            },
            "postgres://db/x",
            "server says \x1b[31mred\x1b[0m\nand more",
        )
        .unwrap();
    let out = disktier()
        .env("XDG_DATA_HOME", data.path())
        .args(["store", "spool"])
        .output()
        .unwrap();
    let text = stdout_ok(&out);
    assert!(!text.contains('\x1b'), "{text:?}");
    assert!(
        text.contains("server says \\u{1b}[31mred\\u{1b}[0m\\nand more"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");
}

/// The id a measuring command printed in its "saved as run ID" note.
fn saved_id(out: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&out.stderr);
    text.split("saved as run ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no saved run id in: {text}"))
        .to_string()
}

/// Regression (QA): a job file's run (`bench FILE.fio` with two jobs) and an `import fio --jobs`
/// run, saved by the binary itself, were "unreadable ... or damaged" in `show`, "(missing
/// field `job`) ... damaged" in `compare --force`, and all "-" in `history`. `show` prints their
/// jobs and groups as `bench FILE.fio` printed them, `history` lists the first group's figures
/// (also for a row saved without them), `compare` refuses them naming their jobs.
#[test]
fn job_file_and_import_jobs_runs_show_list_and_refuse_comparison() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = d.path().join("results.db");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = d.path().join("j1.fio");
    std::fs::write(
        &file,
        format!(
            "[global]\ndirectory={}\nsize=1m\nbs=4k\n\n[reader]\nrw=randread\n\n[writer]\nrw=write\nfdatasync=4\n",
            data.display()
        ),
    )
    .unwrap();
    let out = dt(&db).arg("bench").arg(&file).output().unwrap();
    let printed = stdout_ok(&out);
    let jobfile = saved_id(&out);
    let out = dt(&db)
        .args(["bench", "--rw", "randread", "--size", "1m"])
        .arg(&data)
        .output()
        .unwrap();
    stdout_ok(&out);
    let single = saved_id(&out);
    let fio = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fio");
    let out = dt(&db)
        .args(["import", "fio", "--jobs"])
        .arg(format!("{fio}/cmp-2groups-3.33.json"))
        .output()
        .unwrap();
    stdout_ok(&out);
    let imported = saved_id(&out);

    // show: the run as bench printed it, never "damaged".
    let text = stdout_ok(&dt(&db).args(["show", &jobfile]).output().unwrap());
    assert!(
        !text.contains("unreadable") && !text.contains("damaged"),
        "{text}"
    );
    assert!(text.contains("kind     bench"), "{text}");
    assert!(text.contains("(2 jobs, 1 reporting group)"), "{text}");
    assert!(
        text.contains(&printed),
        "show:\n{text}\nbench printed:\n{printed}"
    );
    for row in [
        "reader           read",
        "writer           write",
        "writer           sync",
    ] {
        assert!(text.contains(row), "{row}: {text}");
    }
    let text = stdout_ok(&dt(&db).args(["show", &imported]).output().unwrap());
    assert!(
        !text.contains("unreadable") && !text.contains("damaged"),
        "{text}"
    );
    assert!(text.contains("kind     import"), "{text}");
    assert!(text.contains("2 reporting groups"), "{text}");
    assert!(
        text.contains("group 0: ") && text.contains("group 1: "),
        "{text}"
    );
    let json = dt(&db)
        .args(["show", &jobfile, "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout_ok(&json)).unwrap();
    assert_eq!(v["kind"], "jobfile");

    // compare: refused for what it is, with --force too, naming the jobs.
    for args in [
        &["compare", "--force", &jobfile, &single][..],
        &["compare", &single, &imported][..],
    ] {
        let out = dt(&db).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("damaged") && !err.contains("missing field"),
            "{err}"
        );
        assert!(err.contains("is the run of the fio job file"), "{err}");
        assert!(err.contains("compare takes single-job runs"), "{err}");
    }
    let out = dt(&db)
        .args(["compare", "--force", &jobfile, &single])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("(jobs reader, writer)"), "{err}");

    // history: the first group's figures, never all "-".
    let listed = |db: &Path| -> serde_json::Value {
        let out = dt(db)
            .args(["history", "--format", "json"])
            .output()
            .unwrap();
        serde_json::from_str(&stdout_ok(&out)).unwrap()
    };
    let check = |v: &serde_json::Value| {
        let runs = v["runs"].as_array().unwrap();
        let row = |id: &str| runs.iter().find(|r| r["id"] == id).unwrap().clone();
        let j = row(&jobfile);
        for k in [
            "read_iops",
            "write_iops",
            "read_bw_bytes",
            "write_bw_bytes",
            "sync_p99_ns",
        ] {
            assert!(j[k].as_f64().is_some_and(|x| x > 0.0), "{k}: {j}");
        }
        // cmp-2groups: group 0 is etcd's job (write and fdatasync).
        let i = row(&imported);
        for k in ["write_iops", "write_bw_bytes", "sync_p99_ns"] {
            assert!(i[k].as_f64().is_some_and(|x| x > 0.0), "{k}: {i}");
        }
        assert!(i["read_iops"].is_null(), "{i}");
    };
    check(&listed(&db));
    let text = stdout_ok(&dt(&db).arg("history").output().unwrap());
    let line = text.lines().find(|l| l.starts_with(&jobfile)).unwrap();
    assert!(!line.ends_with('-'), "{line}");

    // report: a row per job in the job files' section, never an empty "1 run on 0 targets"
    // page.
    let html = d.path().join("jobs.html");
    let out = dt(&db)
        .args(["report", &jobfile, "-o"])
        .arg(&html)
        .output()
        .unwrap();
    stdout_ok(&out);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"jobfiles\">"), "{page}");
    assert!(
        page.contains(&format!(
            "run <span class=\"mono\">{jobfile}</span> · job file"
        )),
        "{page}"
    );
    for job in ["reader", "writer"] {
        assert!(
            page.contains(&format!("<tr><td>{job}</td>")),
            "{job}: {page}"
        );
    }
    assert!(!page.contains("Runs not drawn"), "{page}");
    // A row saved before the listing read job files has no figures: read from the document.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE runs SET sync_p99_ns = NULL, read_iops = NULL, write_iops = NULL, \
         read_bw_bytes = NULL, write_bw_bytes = NULL WHERE id IN (?1, ?2)",
        [&jobfile, &imported],
    )
    .unwrap();
    drop(conn);
    check(&listed(&db));
}

/// Regression (QA): an interrupted run (Ctrl-C) was listed and compared like a complete one;
/// only `show` said "INTERRUPTED". `history` marks it (text and JSON), `compare` notes it.
#[test]
fn an_interrupted_run_is_marked_in_history_and_compare() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let mut cut = fixture("quick-etcd");
    cut["interrupted"] = true.into();
    let mut s = Store::open(Some(db.to_str().unwrap())).unwrap();
    let save = |s: &mut Store, doc: &serde_json::Value| {
        s.save(&NewRun {
            kind: "check",
            group_id: None,
            doc,
        })
        .unwrap()
    };
    let a = save(&mut s, &cut);
    let b = save(&mut s, &fixture("quick-etcd"));
    drop(s);
    let text = stdout_ok(&dt(&db).arg("history").output().unwrap());
    let line = |id: &str| {
        text.lines()
            .find(|l| l.starts_with(id))
            .unwrap()
            .to_string()
    };
    assert!(line(&a).contains(" check (interrupted) "), "{text}");
    assert!(!line(&b).contains("interrupted"), "{text}");
    let out = dt(&db)
        .args(["history", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout_ok(&out)).unwrap();
    let flag = |id: &str| {
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()["interrupted"]
            .clone()
    };
    assert_eq!((flag(&a), flag(&b)), (true.into(), false.into()));
    let text = stdout_ok(&dt(&db).args(["compare", &a, &b]).output().unwrap());
    assert!(text.contains("(etcd, quick, INTERRUPTED)"), "{text}");
    assert!(
        text.contains("note: A was interrupted (Ctrl-C or a signal): its figures are partial"),
        "{text}"
    );
}

/// Regression (QA): an imported fio run beside a quick bench was counted as a "full" run.
#[test]
fn compare_calls_an_import_imported() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let ids = save_runs(
        db.to_str().unwrap(),
        &[("bench", "quick-etcd"), ("import", "ocp-recipe-ebs")],
    );
    let text = stdout_ok(
        &dt(&db)
            .args(["compare", &ids[0], &ids[1]])
            .output()
            .unwrap(),
    );
    assert!(
        text.contains("note: quick and imported runs are mixed (A quick; B imported)"),
        "{text}"
    );
    assert!(!text.contains("full"), "{text}");
}

/// Regression (QA, on PostgreSQL): a row whose stored JSON does not parse stopped `report`,
/// the default one (newest 10 runs) included. It is left out with a warning naming it.
#[test]
fn a_damaged_postgres_row_is_left_out_of_the_report() {
    let Some(Schema {
        client: mut c,
        name: schema,
        url,
    }) = fresh_schema()
    else {
        return;
    };
    let ids = save_checks(&url, &["ocp-recipe-ephemeral", "ocp-recipe-ebs"]);
    c.execute(
        &format!("UPDATE {schema}.runs SET doc = '{{not json' WHERE id = $1"),
        &[&ids[0]],
    )
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    let html = d.path().join("pg.html");
    let out = disktier()
        .env("DISKTIER_DB", &url)
        .args(["report", "--last", "100", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    let text = stdout_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&ids[0]) && err.contains("left out of the report"),
        "{err}"
    );
    assert!(
        text.contains(&format!("(1 run; 1 left out: {})", ids[0])),
        "{text}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(&format!("{}</span>: left out", ids[0])),
        "{page}"
    );
    assert!(
        page.contains("/var/lib/misc/_benchmark_fio"),
        "the other run is drawn"
    );
}

/// Regression (QA): a run on a target whose name is not UTF-8 is stored with U+FFFD in its
/// place, but `history --target` with that path was refused by the argument parser ("invalid
/// UTF-8"), so the run could not be found by its path.
#[test]
fn a_non_utf8_target_is_found_by_its_path() {
    use std::os::unix::ffi::OsStrExt;
    let d = tempfile::tempdir().unwrap();
    let raw = std::ffi::OsStr::from_bytes(b"bad\xff\xfe");
    let dir = d.path().join(raw);
    std::fs::create_dir(&dir).unwrap();
    let canonical = std::fs::canonicalize(&dir).unwrap();
    let mut doc = fixture("quick-etcd");
    doc["target"]["path"] = canonical.to_string_lossy().into_owned().into();
    let db = d.path().join("results.db");
    let id = Store::open(Some(db.to_str().unwrap()))
        .unwrap()
        .save(&NewRun {
            kind: "check",
            group_id: None,
            doc: &doc,
        })
        .unwrap();
    for arg in [dir.clone(), std::path::PathBuf::from(raw)] {
        let out = dt(&db)
            .current_dir(d.path())
            .arg("history")
            .arg("--target")
            .arg(&arg)
            .output()
            .unwrap();
        assert!(stdout_ok(&out).contains(&id), "{arg:?}");
    }
}

/// Found by QA: a relative `XDG_DATA_HOME` put the store under whatever directory disktier was
/// started in. The XDG spec says to ignore a relative value: the store is under `$HOME`.
#[test]
fn a_relative_xdg_data_home_is_ignored() {
    let d = tempfile::tempdir().unwrap();
    let (home, cwd) = (d.path().join("home"), d.path().join("cwd"));
    std::fs::create_dir_all(&cwd).unwrap();
    let out = disktier()
        .env_remove("DISKTIER_DB")
        .env("HOME", &home)
        .env("XDG_DATA_HOME", "rel")
        .current_dir(&cwd)
        .arg("history")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let want = home.join(".local/share/disktier/results.db");
    assert!(err.contains(&want.display().to_string()), "{err}");
    assert!(!err.contains("rel/disktier"), "{err}");
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0);
}
