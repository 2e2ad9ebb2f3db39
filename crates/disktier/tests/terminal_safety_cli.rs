//! Strings from files and users on the terminal: a fio job name, a target path, a volume type.
//! QA (dt-s23): a fio job named `etcd\u{202e}evil\x1b]0;owned\x07` imported with `import fio
//! --jobs` retitled the terminal, and the U+202E (right-to-left override) in a stored target
//! reversed the rest of its `history` and `show` line; a U+202E or a C1 control (U+009B, the
//! 8-bit CSI) in an argument came back raw in the error. Text output and errors now show them
//! escaped (`\u{202e}`, `\u{1b}`), other text (数据, é) as it is; JSON keeps the data (its
//! serializer escapes the controls, and a program reads it).

use disktier_testkit::cli::disktier_at as dt;
use serde_json::Value;
use std::path::Path;

const FIO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/fio/etcd-3.33.json"
);
const JOB: &str = "etcd\u{202e}evil\x1b]0;owned\x07";
const DIR: &str = "/var/lib/数据/\u{202e}gvt\x1b[2J é";

/// Whether `bytes` hold something a terminal would act on: C0/C1 controls other than newline
/// and tab, or a bidi formatting character.
fn raw_unsafe(bytes: &[u8]) -> Option<char> {
    String::from_utf8_lossy(bytes).chars().find(|&c| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
    })
}

/// etcd-3.33.json with the hostile job name and directory.
fn hostile_fio(dir: &Path) -> std::path::PathBuf {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(FIO).unwrap()).unwrap();
    for j in v["jobs"].as_array_mut().unwrap() {
        j["jobname"] = JOB.into();
        j["job options"]["directory"] = DIR.into();
    }
    let f = dir.join("hostile.json");
    std::fs::write(&f, v.to_string()).unwrap();
    f
}

fn text_ok(out: &std::process::Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(c) = raw_unsafe(&out.stdout).or_else(|| raw_unsafe(&out.stderr)) {
        panic!(
            "{what}: {c:?} reached the terminal raw: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn imported_and_stored_names_are_escaped_in_text_and_kept_in_json() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    let file = hostile_fio(d.path());
    let jobs = text_ok(
        &dt(&db)
            .args(["--no-save", "import", "fio", "--jobs"])
            .arg(&file)
            .output()
            .unwrap(),
        "import fio --jobs",
    );
    assert!(
        jobs.contains("group 0: etcd\\u{202e}evil\\u{1b}]0;owned\\u{7}"),
        "{jobs}"
    );
    let import = dt(&db)
        .args(["--format", "json", "import", "fio"])
        .arg(&file)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&import.stdout).unwrap();
    assert_eq!(doc["target"]["path"], DIR, "JSON keeps the data");
    let id = doc["id"].as_str().map(str::to_owned).unwrap_or_else(|| {
        let h = dt(&db)
            .args(["history", "--format", "json"])
            .output()
            .unwrap();
        let h: Value = serde_json::from_slice(&h.stdout).unwrap();
        h["runs"][0]["id"].as_str().unwrap().to_owned()
    });
    let shown = "/var/lib/数据/\\u{202e}gvt\\u{1b}[2J é";
    for args in [vec!["history"], vec!["show", id.as_str()]] {
        let text = text_ok(&dt(&db).args(&args).output().unwrap(), args[0]);
        assert!(text.contains(shown), "{args:?}: {text}");
    }
}

#[test]
fn errors_escape_bidi_overrides_and_c1_controls_in_what_they_quote() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("results.db");
    for (args, want) in [
        // A runtime error (the catalog's), and a usage error (clap's).
        (
            vec!["price", "gp3\u{202e}", "--size", "1GiB"],
            "unknown volume type 'gp3\\u{202e}'",
        ),
        (
            vec!["price", "gp3\u{9b}2J", "--size", "1GiB"],
            "unknown volume type 'gp3\\u{9b}2J'",
        ),
        (
            vec!["price", "gp3", "--size", "10GiB\u{2066}"],
            "'10GiB\\u{2066}' is not a size",
        ),
        (
            vec!["price", "gp3", "--size", "10GiB\u{9b}"],
            "'10GiB\\u{9b}' is not a size",
        ),
    ] {
        let out = dt(&db).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(raw_unsafe(&out.stderr), None, "{args:?}: {err:?}");
    }
}

/// QA (session 27): a trace whose name holds a newline split the first line of `trace import`,
/// `trace stats`, `simulate` and `trace record` in two (the escape sequences were escaped, the
/// newline was not), so a name could print a line of its own. Each keeps it on its line, `\n`.
#[test]
fn a_trace_named_with_a_newline_stays_on_its_line() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("db");
    let iolog = d.path().join("t.iolog");
    std::fs::write(&iolog, "fio version 2 iolog\n/x add\n/x read 0 4096\n").unwrap();
    let name = d.path().join("t\nFAKE LINE\u{202e}.dtt");
    let lines = |args: &[&std::ffi::OsStr], what: &str| {
        let out = dt(&db).arg("--no-save").args(args).output().unwrap();
        let text = text_ok(&out, what);
        let errs = String::from_utf8_lossy(&out.stderr).into_owned();
        for l in text.lines().chain(errs.lines()) {
            assert!(!l.starts_with("FAKE LINE"), "{what}: {text}{errs}");
        }
        assert!(
            text.contains("t\\nFAKE LINE\\u{202e}.dtt"),
            "{what}: {text}"
        );
    };
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    lines(
        &[
            os("trace"),
            os("import"),
            os("fio-iolog"),
            iolog.as_os_str(),
            os("-o"),
            name.as_os_str(),
        ],
        "trace import",
    );
    lines(&[os("trace"), os("stats"), name.as_os_str()], "trace stats");
    lines(
        &[
            os("simulate"),
            os("--trace"),
            name.as_os_str(),
            os("--cache-sizes"),
            os("1MiB"),
            os("--policies"),
            os("lru"),
        ],
        "simulate",
    );
    let target = d.path().join("data");
    lines(
        &[
            os("trace"),
            os("record"),
            target.as_os_str(),
            os("--rw"),
            os("write"),
            os("--size"),
            os("64k"),
            os("-o"),
            name.as_os_str(),
        ],
        "trace record",
    );
}
