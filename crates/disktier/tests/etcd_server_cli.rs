//! `disktier check etcd --profile etcd-server` on a real xfs loop device: both streams ran at
//! their rates, the verdict is the WAL fdatasync p99 and the backend commit p99 is the second
//! figure. (How close it comes to real etcd is bench/etcd-vs-disktier.sh's question.)

use assert_cmd::Command;
use disktier_testkit::cli::verdict;
use disktier_testkit::loop_fs;
use serde_json::Value;
use std::path::PathBuf;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_disktier"))
}

#[test]
fn etcd_server_profile_judges_wal_syncs_and_backend_commits() {
    let Some((_dev, m)) = loop_fs(400 << 20, "xfs") else {
        return;
    };
    let out = Command::new(bin())
        .args(["--format", "json", "--no-save", "check", "etcd"])
        .arg(&m.dir)
        .args(["--profile", "etcd-server", "--quick", "--threshold", "10s"])
        .output()
        .unwrap();
    let code = out.status.code();
    assert!(
        matches!(code, Some(0) | Some(1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["profile"], "etcd-server");
    assert_eq!(v["verdicts"][0]["name"], "etcd");
    assert_eq!(v["verdicts"][0]["metric"], "sync.p99");
    let commit = verdict(&v, "etcd-backend-commit");
    assert_eq!(commit["threshold"], 25e6);
    // Exit 0 exactly when both figures are within their limits (the WAL's is 10 s here).
    let all_pass = v["verdicts"][0]["pass"] == true && commit["pass"] == true;
    assert_eq!(code == Some(0), all_pass, "{v}");
    // 10 s: 150 proposals/s batched into at most 1500 WAL syncs; a commit 100 ms after the
    // previous one ended (etcd resets its batch timer after a commit): at most 100.
    let syncs = v["results"]["sync"]["ios"].as_u64().unwrap();
    assert!((100..=1501).contains(&syncs), "{syncs}");
    // Every WAL fdatasync is timed: counted against etcd's raft timeouts, as the etcd profile's
    // are (QA on dt-s23: "how many fsyncs took that long is not in this result").
    let stalls = &v["results"]["sync"]["stalls"];
    assert_eq!(stalls["heartbeat_ns"], 100_000_000, "{stalls}");
    assert_eq!(stalls["election_ns"], 1_000_000_000, "{stalls}");
    let max = v["results"]["sync"]["lat_ns"]["max"].as_u64().unwrap();
    assert_eq!(
        stalls["over_heartbeat"].as_u64().unwrap() > 0,
        max > 100_000_000,
        "{stalls} max {max}"
    );
    assert_eq!(
        verdict(&v, "etcd-stalls")["value"].as_f64(),
        stalls["over_heartbeat"].as_f64()
    );
    assert!(v["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["name"] != "etcd-longest-sync"));
    let commits = v["backend_commit"]["ios"].as_u64().unwrap();
    assert!((30..=100).contains(&commits), "{commits}");
    // The same fsyncs as etcd's own histogram would report them: interpolated inside one of
    // etcd's buckets (1 ms doubling), the bucket that holds the exact p99 too.
    let r = &v["as_etcd_reports"];
    for (p99, bucket, exact) in [
        (
            "wal_fsync_p99_ns",
            "wal_fsync_bucket_ns",
            v["verdicts"][0]["value"].as_f64().unwrap(),
        ),
        (
            "backend_commit_p99_ns",
            "backend_commit_bucket_ns",
            commit["value"].as_f64().unwrap(),
        ),
    ] {
        let q = r[p99].as_f64().unwrap_or_else(|| panic!("{p99}: {r}"));
        let lo = r[bucket][0].as_f64().unwrap();
        let hi = r[bucket][1].as_f64().unwrap_or(f64::INFINITY);
        assert!(lo <= q && q <= hi, "{p99} {q} outside [{lo}, {hi}]");
        let bounds: Vec<f64> = (0..14).map(|i| 1e6 * 2f64.powi(i)).collect();
        assert!(
            bounds.contains(&hi) || (lo == 0.0 && hi == 1e6) || hi.is_infinite(),
            "{bucket} {hi}"
        );
        assert!(lo == 0.0 || bounds.contains(&lo), "{bucket} {lo}");
        // hdrhistogram keeps 3 significant digits: the exact p99 is in the bucket, to 0.1 %
        assert!(
            exact >= lo * 0.999 && exact <= hi * 1.001,
            "{p99}: exact {exact} outside [{lo}, {hi}]"
        );
    }
    assert_eq!(v["backend_fdatasync"]["ios"].as_u64().unwrap(), 2 * commits);
    assert_eq!(
        commit["value"].as_f64().unwrap(),
        v["backend_commit"]["lat_ns"]["percentiles"]["99"]
            .as_f64()
            .unwrap()
    );
    // Nothing left behind.
    assert_eq!(std::fs::read_dir(&m.dir).unwrap().count(), 0);

    // It is a model, not a fio job: job options and --engine fio are refused.
    for extra in [&["--bs", "4k"][..], &["--engine", "fio"][..]] {
        let out = Command::new(bin())
            .args(["--no-save", "check", "etcd"])
            .arg(&m.dir)
            .args(["--profile", "etcd-server"])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("etcd-server") && err.contains("--profile etcd"),
            "{err}"
        );
    }
}

/// QA: `--repeat 3` with `--profile etcd-server` ran the model once and printed one run, no
/// aggregate (and `--keep-files`, `--destructive`, `--no-layout` were ignored as silently): each
/// is now refused before anything runs, naming the flags.
#[test]
fn etcd_server_refuses_the_run_settings_it_would_ignore() {
    let d = tempfile::tempdir().unwrap();
    for (args, named) in [
        (&["--repeat", "3"][..], "--repeat does not apply"),
        (
            &["--keep-files", "--no-layout"][..],
            "--keep-files, --no-layout do not apply",
        ),
        (&["--destructive"][..], "--destructive does not apply"),
    ] {
        let out = Command::new(bin())
            .args(["--no-save", "check", "etcd"])
            .arg(d.path())
            .args(["--profile", "etcd-server", "--quick"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(named) && err.contains("--profile etcd"),
            "{err}"
        );
        assert!(!err.contains("running the etcd-server model"), "{err}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
