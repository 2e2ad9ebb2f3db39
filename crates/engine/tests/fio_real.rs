//! The fio engine against the real fio: paths fio would split, and the time limit that keeps a
//! hung fio from hanging disktier (#13). Skipped (with the reason) where fio is missing.

use disktier_engine::fio::{self, FioError, FioOptions};
use disktier_engine::*;
use disktier_testkit::{have, require};
use std::time::{Duration, Instant};

fn fio_options() -> FioOptions {
    FioOptions {
        program: disktier_cmd::which(fio::FIO),
        ..FioOptions::default()
    }
}

/// Regression: fio splits `--filename=a:b` into the files `a` and `b`; escaped, it writes `a:b`.
#[test]
fn a_colon_in_the_filename_is_one_file_for_fio() {
    if !require(have("fio"), "fio") {
        return;
    }
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let target = d.path().join("a:b");
    let job = Job {
        target: target.clone(),
        name: "colon".into(),
        rw: Rw::Write,
        bs: 4096,
        size: Some(256 * 1024),
        ioengine: IoEngineKind::Psync,
        ..Job::default()
    };
    let info = preflight(&job, &RunOptions::default()).unwrap();
    let opts = FioOptions {
        keep_files: true,
        ..fio_options()
    };
    let m = fio::run(&job, &disktier_cmd::RealRunner, info, &opts).unwrap();
    assert_eq!(m.doc.results.write.as_ref().unwrap().bytes, 256 * 1024);
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["a:b"], "one file, named as asked");
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 256 * 1024);
    // The command line carries fio's escape.
    let cmd = fio::command(&job, false);
    assert!(
        cmd.args.iter().any(|a| a.ends_with("a\\:b")),
        "{:?}",
        cmd.args
    );
}

/// A fio that runs past its limit is killed, and the error says so (not a hang).
#[test]
fn fio_past_its_time_limit_is_killed_with_a_clear_error() {
    if !require(have("fio"), "fio") {
        return;
    }
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let job = Job {
        target: d.path().join("slow"),
        name: "slow".into(),
        rw: Rw::RandRead,
        size: Some(1 << 20),
        runtime: Some(Duration::from_secs(600)),
        time_based: true,
        ioengine: IoEngineKind::Psync,
        ..Job::default()
    };
    let info = preflight(&job, &RunOptions::default()).unwrap();
    let opts = FioOptions {
        timeout: Some(Duration::from_secs(2)),
        ..fio_options()
    };
    let t = Instant::now();
    let e = fio::run(&job, &disktier_cmd::RealRunner, info, &opts).unwrap_err();
    assert!(matches!(e, FioError::Timeout { .. }), "{e:?}");
    assert!(e.to_string().contains("time limit"), "{e}");
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "killed, not waited for"
    );
    assert!(!d.path().join("slow").exists(), "its file was removed");
    // The default limit is the runtime plus a margin.
    assert!(fio::timeout_for(&job) > Duration::from_secs(600));
    assert!(fio::timeout_for(&job) < Duration::from_secs(3600));
}
