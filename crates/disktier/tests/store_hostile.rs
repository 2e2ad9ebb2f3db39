//! A hostile-input sweep over the store's commands (`history`, `show`, `compare`, `report`,
//! `store`): damaged database files, damaged rows, hostile run ids, absurd `--last`, a
//! symlinked report path, control characters in stored names. Every case ends with a clear
//! message and exit status 0 or 2: never a panic (101), a hang, or a change to what was not
//! asked for.

use assert_cmd::Command;
use disktier_testkit::cli::disktier;
use disktier_testkit::cli::store_fixture as fixture;
use predicates::prelude::*;
use std::path::Path;
use std::time::Duration;

fn dt(db: &Path, data: &Path) -> Command {
    let mut c = disktier();
    c.env("DISKTIER_DB", db)
        .env("XDG_DATA_HOME", data)
        .timeout(Duration::from_secs(60));
    c
}

fn store_with(db: &Path, docs: &[serde_json::Value]) -> Vec<String> {
    let mut s = disktier_store::Store::open(Some(db.to_str().unwrap())).unwrap();
    docs.iter()
        .map(|d| {
            s.save(&disktier_store::NewRun {
                kind: "check",
                group_id: None,
                doc: d,
            })
            .unwrap()
        })
        .collect()
}

/// Exit status 0 or 2 and no panic message.
fn sane(out: &std::process::Output, what: &str) -> i32 {
    let err = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 2,
        "{what}: exit {code} (a panic is 101): {err}"
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
    code
}

#[test]
fn hostile_run_ids_and_limits_get_clear_errors() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("r.db");
    let ids = store_with(&db, &[fixture("quick-etcd"), fixture("ocp-recipe-ebs")]);
    for id in [
        "",
        "%",
        "_",
        "../../etc/passwd",
        "\u{1b}[31mred",
        "a\nb",
        "' OR 1=1 --",
    ] {
        let out = dt(&db, t.path()).args(["show", id]).output().unwrap();
        assert_eq!(sane(&out, id), 2, "show {id:?} must fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("not a run id") || err.contains("no stored run"),
            "{err}"
        );
        // Named quoted: the terminal never receives the raw escape or line break.
        assert!(!err.contains('\u{1b}'), "{err:?}");
        let out = dt(&db, t.path())
            .args(["compare", &ids[0], id])
            .output()
            .unwrap();
        assert_eq!(sane(&out, id), 2);
        let out = dt(&db, t.path())
            .args(["report", id, "-o"])
            .arg(t.path().join("x.html"))
            .output()
            .unwrap();
        assert_eq!(sane(&out, id), 2);
        assert!(!t.path().join("x.html").exists());
    }
    for last in ["1", "18446744073709551615"] {
        let out = dt(&db, t.path())
            .args(["history", "--last", last])
            .output()
            .unwrap();
        assert_eq!(sane(&out, last), 0, "history --last {last}");
    }
    // 0 is refused, as report's is (QA: it listed nothing and said no run matched).
    let out = dt(&db, t.path())
        .args(["history", "--last", "0"])
        .output()
        .unwrap();
    assert_eq!(sane(&out, "0"), 2, "history --last 0");
    let out = dt(&db, t.path())
        .args(["history", "--last", "99999999999999999999999"])
        .output()
        .unwrap();
    assert_eq!(sane(&out, "huge"), 2);
    let out = dt(&db, t.path())
        .args(["report", "--last", "18446744073709551615", "-o"])
        .arg(t.path().join("all.html"))
        .output()
        .unwrap();
    assert_eq!(sane(&out, "report huge last"), 0);
}

#[test]
fn damaged_database_files_are_refused_and_left_alone() {
    let t = tempfile::tempdir().unwrap();
    let good = t.path().join("good.db");
    store_with(&good, &[fixture("quick-etcd")]);
    drop(disktier_store::Store::open(Some(good.to_str().unwrap())).unwrap());
    let bytes = std::fs::read(&good).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "random",
            (0..8192u32)
                .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
                .collect(),
        ),
        ("truncated", bytes[..bytes.len().min(1500)].to_vec()),
        ("text", b"not a database at all\n".to_vec()),
        ("header-only", bytes[..100.min(bytes.len())].to_vec()),
    ];
    for (name, content) in cases {
        let db = t.path().join(format!("{name}.db"));
        std::fs::write(&db, &content).unwrap();
        for args in [
            vec!["history"],
            vec!["show", "20260101-000000-abcdef"],
            vec!["report", "-o", "/dev/null/x.html"],
        ] {
            let out = dt(&db, t.path()).args(&args).output().unwrap();
            assert_eq!(sane(&out, name), 2, "{name} {args:?}");
        }
        assert_eq!(std::fs::read(&db).unwrap(), content, "{name} was changed");
    }
    // A directory where the database should be.
    let out = dt(t.path(), t.path()).arg("history").output().unwrap();
    assert_eq!(sane(&out, "dir"), 2);
}

#[test]
fn a_damaged_row_is_named_and_the_others_still_read() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("r.db");
    let ids = store_with(&db, &[fixture("quick-etcd"), fixture("ocp-recipe-ebs")]);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE runs SET doc = '{\"truncated', host_json = 'nope' WHERE id = ?1",
        [&ids[0]],
    )
    .unwrap();
    // A name with a line break and a terminal escape in a listing column.
    c.execute(
        "UPDATE runs SET target = ?1 WHERE id = ?2",
        ["/mnt/a\n\u{1b}]0;owned\u{7}", &ids[1]],
    )
    .unwrap();
    drop(c);
    let out = dt(&db, t.path()).arg("history").output().unwrap();
    assert_eq!(sane(&out, "history"), 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert_eq!(text.lines().count(), 3, "{text}");
    let out = dt(&db, t.path()).args(["show", &ids[0]]).output().unwrap();
    assert_eq!(sane(&out, "show damaged"), 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("damaged") && err.contains(&ids[0]), "{err}");
    let out = dt(&db, t.path()).args(["show", &ids[1]]).output().unwrap();
    assert_eq!(sane(&out, "show good"), 0);
    // Regression (QA): the damaged row stopped the whole report (the default one too). It is
    // left out, named on stderr and in the report; the other run is drawn.
    let html = t.path().join("r.html");
    let out = dt(&db, t.path())
        .args(["report", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(sane(&out, "report"), 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("warning: run \"{}\" in", ids[0]))
            && err.contains("it is left out of the report"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("1 left out: {}", ids[0])));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(&format!(
        "run <span class=\"mono\">{}</span>: left out",
        ids[0]
    )));
    assert!(
        page.contains("<section id=\"verdicts\">"),
        "the good run is drawn"
    );
    // Named alone, it is reported as unreadable, and there is nothing to draw.
    let out = dt(&db, t.path())
        .args(["report", &ids[0], "-o"])
        .arg(t.path().join("only.html"))
        .output()
        .unwrap();
    assert_eq!(sane(&out, "report of the damaged run"), 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nothing to report: the 1 selected run cannot be read"),
        "{err}"
    );
    assert!(!t.path().join("only.html").exists());
}

#[test]
fn a_symlinked_report_path_is_refused_and_its_target_untouched() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("r.db");
    store_with(&db, &[fixture("quick-etcd")]);
    let victim = t.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = t.path().join("report.html");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    dt(&db, t.path())
        .args(["report", "-o"])
        .arg(&link)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("symlink"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    // A directory as the output.
    dt(&db, t.path())
        .args(["report", "-o"])
        .arg(t.path())
        .assert()
        .code(2);
    // No temporary file is left behind, and a normal path works, replacing the old report
    // and keeping its mode.
    let out = t.path().join("ok.html");
    std::fs::write(&out, "").unwrap();
    dt(&db, t.path())
        .args(["report", "-o"])
        .arg(&out)
        .assert()
        .success();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    dt(&db, t.path())
        .args(["report", "-o"])
        .arg(&out)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&out).unwrap().contains("<html"));
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o640
    );
    let left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_damaged_spool_file_is_reported_not_fatal() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("r.db");
    store_with(&db, &[fixture("quick-etcd")]);
    let spool = t.path().join("disktier/spool");
    std::fs::create_dir_all(&spool).unwrap();
    std::fs::write(
        spool.join("20260101-000000-aaaaaa.json"),
        b"{\"schema_version\":1",
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", spool.join("20260101-000000-bbbbbb.json")).unwrap();
    let out = dt(&db, t.path()).args(["store", "spool"]).output().unwrap();
    assert_eq!(sane(&out, "spool"), 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("NOT A SPOOLED RUN"));
    let out = dt(&db, t.path())
        .args(["store", "flush", "--all"])
        .output()
        .unwrap();
    assert_eq!(sane(&out, "flush"), 2);
    assert!(spool.join("20260101-000000-aaaaaa.json").exists());
    // history still works.
    let out = dt(&db, t.path()).arg("history").output().unwrap();
    assert_eq!(sane(&out, "history"), 0);
}

/// Regression (QA): `store flush` printed a spool file's name and the store's path as they
/// were, so a newline in either split a run's line in two ("FAILED: .../a" then "b.json: not
/// a spooled run ..."), where `store spool` escaped it. Each run is one line, `\n` escaped.
#[test]
fn a_newline_in_a_spool_file_or_store_name_stays_on_its_line() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("r\nstore.db");
    store_with(&db, &[fixture("quick-etcd")]);
    let spool = t.path().join("disktier/spool");
    std::fs::create_dir_all(&spool).unwrap();
    std::fs::write(spool.join("a\nb.json"), b"{}").unwrap();
    let out = dt(&db, t.path())
        .args(["store", "flush", "--all"])
        .output()
        .unwrap();
    assert_eq!(sane(&out, "flush"), 2);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].starts_with("FAILED: ") && lines[0].contains("/a\\nb.json: not a spooled run"),
        "{text}"
    );
}

/// Regression (QA): a FIFO at a spool file's name held `store spool`, `store flush` and every
/// run that saves (a save flushes the spool) forever, opening it for a writer that never came
/// (a SIGTERM did not end the wait). It is now reported as not a regular file, and left.
#[test]
fn a_fifo_in_the_spool_holds_nothing() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("r.db");
    store_with(&db, &[fixture("quick-etcd")]);
    let spool = t.path().join("disktier/spool");
    std::fs::create_dir_all(&spool).unwrap();
    let fifo = spool.join("20260101-000000-cccccc.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let quick = |args: &[&str]| {
        dt(&db, t.path())
            .args(args)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap()
    };
    let out = quick(&["store", "spool"]);
    assert_eq!(sane(&out, "spool"), 0);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("NOT A SPOOLED RUN") && listed.contains("not a regular file"),
        "{listed}"
    );
    assert_eq!(sane(&quick(&["store", "flush", "--all"]), "flush"), 2);
    let fio = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/etcd-3.33.json");
    let out = quick(&["import", "fio", fio.to_str().unwrap(), "--profile", "etcd"]);
    assert_eq!(sane(&out, "import"), 0);
    assert!(fifo.exists());
}

/// QA: with a file at the spool's path, `store spool` said "the spool ... is empty" (exit 0) and
/// `store flush` "nothing to flush", while a run the store could not take was told "it cannot be
/// spooled ... either (File exists (os error 17))". Both commands now refuse it (exit 2) naming
/// the path and the fix, and so does the spooling warning.
#[test]
fn a_file_at_the_spools_path_is_named() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("r.db");
    std::fs::create_dir_all(t.path().join("disktier")).unwrap();
    let spool = t.path().join("disktier/spool");
    std::fs::write(&spool, "").unwrap();
    let want = format!("the spool {} is not a directory", spool.display());
    for args in [&["store", "spool"][..], &["store", "flush"]] {
        let out = dt(&db, t.path()).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&want) && err.contains("move it aside"),
            "{args:?}: {err}"
        );
    }
    let fio = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/etcd-3.33.json");
    let out = dt(Path::new("/proc/no-such-store.db"), t.path())
        .args(["import", "fio"])
        .arg(&fio)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot be spooled") && err.contains(&want),
        "{err}"
    );
}

#[test]
fn help_never_shows_the_password_in_disktier_db() {
    for args in [
        vec!["--help"],
        vec!["history", "--help"],
        vec!["report", "--help"],
    ] {
        let out = disktier()
            .env(
                "DISKTIER_DB",
                "postgres://app:Hunter2pw@db/x?password=Hunter2pw",
            )
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("DISKTIER_DB"), "{text}");
        assert!(!text.contains("Hunter2pw"), "{args:?}: {text}");
    }
}

#[test]
fn a_mistyped_url_is_refused_without_its_password_or_a_file() {
    let t = tempfile::tempdir().unwrap();
    let out = disktier()
        .current_dir(t.path())
        .env("XDG_DATA_HOME", t.path())
        .args(["--db", "postgress://app:Hunter2pw@db/x", "history"])
        .output()
        .unwrap();
    assert_eq!(sane(&out, "typo"), 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("postgress://app:***@db/x"), "{err}");
    assert!(!err.contains("Hunter2pw"), "{err}");
    assert!(!t.path().join("postgress:").exists());
}
