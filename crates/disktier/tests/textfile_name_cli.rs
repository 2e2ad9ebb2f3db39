//! Two targets into one textfile directory: each run replaced `disktier_<command>.prom`, so
//! the collector kept only the last target's figures and nothing said so (a node with etcd on
//! one disk and data on another, checked from two cron lines). Now a run that replaces another
//! target's figures warns (even with `--quiet`), and `--textfile-name` gives each its own file.

use disktier_testkit::cli::disktier;
use std::path::{Path, PathBuf};

/// `bench TARGET` (a short write job) into the textfile directory `prom`, `--quiet`, with
/// `extra` options; returns (exit code, stderr).
fn bench_into(target: &Path, prom: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let out = disktier()
        .args(["--no-save", "--quiet", "bench"])
        .arg(target)
        .args(["--rw", "write", "--size", "1m", "--runtime", "200ms"])
        .arg("--textfile-dir")
        .arg(prom)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let (a, b, prom) = (d.path().join("a"), d.path().join("b"), d.path().join("tf"));
    for p in [&a, &b, &prom] {
        std::fs::create_dir(p).unwrap();
    }
    (d, a, b, prom)
}

fn path_label(p: &Path) -> String {
    format!("path=\"{}\"", std::fs::canonicalize(p).unwrap().display())
}

#[test]
fn replacing_another_targets_figures_warns() {
    let (_d, a, b, prom) = setup();
    let file = prom.join("disktier_bench.prom");
    let (code, err) = bench_into(&a, &prom, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");
    // The same target again: its own figures are replaced, nothing to say.
    let (code, err) = bench_into(&a, &prom, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let (code, err) = bench_into(&b, &prom, &[]);
    assert_eq!(code, Some(0), "{err}");
    let a_canon = std::fs::canonicalize(&a).unwrap();
    assert!(
        err.contains(&format!(
            "warning: {} held the figures of {}",
            file.display(),
            a_canon.display()
        )) && err.contains("--textfile-name"),
        "{err}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains(&path_label(&b)) && !text.contains(&path_label(&a)),
        "{text}"
    );
}

#[test]
fn textfile_name_gives_each_target_its_own_file() {
    let (_d, a, b, prom) = setup();
    for (t, name) in [(&a, "disktier_bench_a"), (&b, "disktier_bench_b.prom")] {
        let (code, err) = bench_into(t, &prom, &["--textfile-name", name]);
        assert_eq!(code, Some(0), "{err}");
        assert!(!err.contains("warning"), "{err}");
    }
    let mut files: Vec<String> = std::fs::read_dir(&prom)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["disktier_bench_a.prom", "disktier_bench_b.prom"]);
    let a_text = std::fs::read_to_string(prom.join("disktier_bench_a.prom")).unwrap();
    assert!(a_text.contains(&path_label(&a)), "{a_text}");
    let b_text = std::fs::read_to_string(prom.join("disktier_bench_b.prom")).unwrap();
    assert!(b_text.contains(&path_label(&b)), "{b_text}");
}

#[test]
fn bad_textfile_names_are_refused_before_measuring() {
    let (_d, a, _b, prom) = setup();
    for name in ["../x", ".hidden", "", "a/b", "a b", ".prom"] {
        let (code, err) = bench_into(&a, &prom, &["--textfile-name", name]);
        assert_eq!(code, Some(2), "{name:?}: {err}");
        assert!(err.contains("is not a textfile name"), "{name:?}: {err}");
    }
    assert_eq!(std::fs::read_dir(&prom).unwrap().count(), 0);
    // Without --textfile-dir, and where nothing is exported.
    let out = disktier()
        .args(["--no-save", "bench"])
        .arg(&a)
        .args(["--rw", "write", "--size", "1m", "--runtime", "200ms"])
        .args(["--textfile-name", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --textfile-dir DIR too"));
    let out = disktier()
        .args(["history", "--textfile-name", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--textfile-name is for check"));
}
