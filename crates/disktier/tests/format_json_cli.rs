//! `--format json` on every command: each line of tests/fixtures/cli/format-json-runs.txt (the
//! binary's unit test cli_walk_tests checks, by walking the clap definition, that every command
//! that runs has one) is run in one scratch directory with its own store, and prints one JSON
//! document on stdout; each command refused (a usage error) prints nothing on stdout, as README
//! says: an error is one line on stderr, and stdout holds no broken document.

use disktier_testkit::cli::disktier;
use std::path::Path;

fn table() -> Vec<(Vec<String>, String)> {
    let text = include_str!("fixtures/cli/format-json-runs.txt");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (path, args) = l.split_once('|').unwrap();
            let path = path.split_whitespace().map(str::to_string).collect();
            (path, args.trim().to_string())
        })
        .collect()
}

/// `disktier` run in `dir`, with the store, the data and config directories and the
/// kubeconfig all inside it (nothing of the user's is read or written).
fn disktier_in(dir: &Path) -> assert_cmd::Command {
    let mut c = disktier();
    c.current_dir(dir)
        .env("DISKTIER_DB", dir.join("results.db"))
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("KUBECONFIG", dir.join("no-kubeconfig"))
        .env_remove("DISKTIER_CATALOG");
    c
}

/// How many JSON documents `stdout` holds (whitespace between them allowed), or the error.
fn documents(stdout: &[u8]) -> Result<usize, serde_json::Error> {
    serde_json::Deserializer::from_slice(stdout)
        .into_iter::<serde_json::Value>()
        .try_fold(0, |n, v| v.map(|_| n + 1))
}

#[test]
fn every_command_prints_one_json_document_with_format_json() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fx = root.join("tests/fixtures");
    let cs = root.join("../cachesim/tests/fixtures");
    let tmp = tempfile::tempdir().unwrap();
    let mut runs: Vec<String> = Vec::new();
    let mut ran = 0;
    for (path, args) in table() {
        if args.starts_with("parse:") {
            continue;
        }
        let words: Vec<String> = args
            .split_whitespace()
            .map(|w| {
                w.replace("{FX}", fx.to_str().unwrap())
                    .replace("{CS}", cs.to_str().unwrap())
                    .replace("{TMP}", tmp.path().to_str().unwrap())
                    .replace("{RUN1}", runs.first().map_or("", |s| s))
                    .replace("{RUN2}", runs.get(1).map_or("", |s| s))
            })
            .collect();
        let out = disktier_in(tmp.path())
            .args(["--format", "json"])
            .args(&path)
            .args(&words)
            .output()
            .unwrap();
        let line = format!(
            "disktier --format json {} {}",
            path.join(" "),
            words.join(" ")
        );
        // 1: a verdict failed (import fio-text's fixture holds a slow fsync): still a document.
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{line}: exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            documents(&out.stdout).unwrap_or_else(|e| panic!("{line}: not JSON: {e}")),
            1,
            "{line}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        if path == ["history"] {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            runs = v["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_str().unwrap().to_string())
                .collect();
            assert!(runs.len() >= 2, "{runs:?}");
        }
        ran += 1;
    }
    assert!(ran >= 25, "only {ran} commands ran");
}

#[test]
fn every_command_refused_prints_nothing_on_stdout_with_format_json() {
    let tmp = tempfile::tempdir().unwrap();
    for (path, _) in table() {
        // An option no command has: refused by the parser, before anything runs.
        let out = disktier_in(tmp.path())
            .args(["--format", "json"])
            .args(&path)
            .arg("--no-such-option")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{path:?}");
        assert!(out.stdout.is_empty(), "{path:?}: {:?}", out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: "), "{path:?}: {err}");
    }
}
