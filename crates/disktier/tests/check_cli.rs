//! `disktier check etcd` regressions from QA, on the real binary: a pass on tmpfs is not called
//! a disk; a job the options made unjudgeable (no writes, no syncs, a runtime of microseconds)
//! is refused before any I/O; a block device gets advice `check` can follow.

use disktier_testkit::cli::{disktier_at as dt, json_ok};
use disktier_testkit::loop_dev;
use std::path::Path;
use std::time::{Duration, Instant};

fn check(db: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    dt(db)
        .args(["--no-save", "check", "etcd"])
        .arg(dir)
        .args(args)
        .output()
        .unwrap()
}

/// stderr of a refused check: one `error:` line, exit 2.
fn refused(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().filter(|l| !l.is_empty()).count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

/// QA: `check etcd` on a tmpfs directory said "the disk can be used to host etcd" and exited 0.
/// The arithmetic stands (exit 0 within 10 ms), the words say it is RAM, in text and JSON.
#[test]
fn a_pass_on_tmpfs_says_ram_not_a_disk() {
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let db = d.path().join("db");
    let target = d.path().join("etcd");
    std::fs::create_dir(&target).unwrap();
    let out = check(&db, &target, &["--quick"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        !text.contains("the disk can be used to host etcd"),
        "{text}"
    );
    assert!(text.contains("RAM, not a disk"), "{text}");
    assert!(text.contains("lost on reboot"), "{text}");
    let v = json_ok(&check(&db, &target, &["--quick", "--format", "json"]));
    assert!(v["verdicts"][0]["pass"].as_bool().unwrap());
    assert!(
        !v["verdicts"][0]["message"]
            .as_str()
            .unwrap()
            .contains("the disk can be used"),
        "{v:#}"
    );
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("is on tmpfs")),
        "{v:#}"
    );
}

/// QA: `check etcd DIR --rw read --size 200m` laid out and read 200 MiB, then refused (and
/// `--fdatasync 0` wrote, then blamed the job). Refused before any I/O now.
#[test]
fn a_job_without_synced_writes_is_refused_before_any_io() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = d.path().join("db");
    let target = d.path().join("etcd");
    std::fs::create_dir(&target).unwrap();
    for (args, says) in [
        (&["--rw", "read", "--size", "200m"][..], "--rw read"),
        (&["--fdatasync", "0"][..], "--fdatasync 0"),
    ] {
        let t0 = Instant::now();
        let err = refused(&check(&db, &target, args));
        assert!(err.contains(says) && err.contains("fdatasync"), "{err}");
        assert!(t0.elapsed() < Duration::from_secs(2), "it ran first");
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    }
}

/// QA: `--runtime 1us` ran, measured no fdatasync and blamed the job ("needs a write job with
/// --fdatasync=1").
#[test]
fn a_runtime_below_a_millisecond_is_refused() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let target = d.path().join("etcd");
    std::fs::create_dir(&target).unwrap();
    for rt in ["1us", "1ns", "999us"] {
        let err = refused(&check(&d.path().join("db"), &target, &["--runtime", rt]));
        assert!(
            err.contains("runtime=") && err.contains("at least 1ms"),
            "{err}"
        );
        assert!(!err.contains("--fdatasync=1"), "{err}");
    }
}

/// QA: `check etcd /dev/loopN` advised `bench --profile etcd`, which refuses devices too.
#[test]
fn a_block_device_gets_advice_check_can_follow() {
    let Some(dev) = loop_dev(16 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let err = refused(&check(&d.path().join("db"), &dev.path, &[]));
    assert!(err.contains("is a block device"), "{err}");
    assert!(
        err.contains("mount") && err.contains("disktier setup"),
        "{err}"
    );
    assert!(!err.contains("bench --profile etcd"), "{err}");
}

/// `check etcd --metrics` judges etcd's own metrics: it has no run to export, so
/// `--format prometheus` and `--textfile-dir` are refused before any scrape, not answered with
/// text and exit 0.
#[test]
fn live_metrics_refuse_an_export_they_cannot_make() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("db");
    for extra in [
        &["--format", "prometheus"][..],
        &["--textfile-dir", d.path().to_str().unwrap()][..],
    ] {
        let out = dt(&db)
            .args(["check", "etcd", "--metrics", "http://127.0.0.1:9/metrics"])
            .args(extra)
            .output()
            .unwrap();
        let err = refused(&out);
        assert!(err.contains("--metrics") && err.contains("json"), "{err}");
        assert!(out.stdout.is_empty());
    }
}

/// Options of one kind of check given to the other are refused, not ignored (QA: clap's
/// `requires = "metrics"` is void once DIR is given, which conflicts with --metrics, so `check
/// etcd DIR --interval 60 --cacert ca.crt` measured DIR, and `--metrics URL --threshold 5ms`
/// judged against 10 ms). Each is refused before anything is measured or fetched.
#[test]
fn options_of_the_other_kind_of_check_are_refused() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (args, expect) in [
        (
            &["--interval", "60"][..],
            "--interval only applies to --metrics",
        ),
        (
            &["--cacert", "/ca.crt", "--cert", "/c.crt", "--key", "/c.key"],
            "--cacert, --cert, --key only apply to --metrics",
        ),
    ] {
        let err = refused(&check(db.path(), dir.path(), args));
        assert!(err.contains(expect), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // A port nothing listens on: a refusal that came after a fetch would name the connection.
    let url = "http://127.0.0.1:9/metrics";
    for (args, expect) in [
        (
            &["--threshold", "5ms"][..],
            "cannot be used with '--threshold",
        ),
        (&["--quick"], "cannot be used with '--quick'"),
        (
            &["--profile", "etcd-openshift"],
            "cannot be used with '--profile",
        ),
        (
            &["--bs", "4k", "--keep-files"],
            "--bs, --keep-files set up the job a measured check runs",
        ),
        (&["--runtime", "5s"], "--runtime sets up the job"),
    ] {
        let out = dt(db.path())
            .args(["--no-save", "check", "etcd", "--metrics", url])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
        assert!(!err.contains("refused"), "{args:?} fetched: {err}");
    }
}

/// QA: `--threshold 10` (etcd's "10 ms" without its unit) was 10 s, as fio reads a bare time,
/// so a disk with a fdatasync p99 of 15.9 ms passed ("within the recommended threshold - 10 s,
/// the disk can be used to host etcd", exit 0). A bare number is refused before any I/O.
#[test]
fn a_threshold_without_its_unit_is_refused() {
    let db = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = check(db.path(), dir.path(), &["--quick", "--threshold", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "'10' has no unit, and a bare number would be seconds: write the unit, e.g. 10ms"
        ),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// QA: `check etcd /proc` (or /sys, a cgroup tree) was told "needs 23068672 bytes but its
/// filesystem has only 0 bytes free: pass a smaller --size", and `assess /proc` "cannot create
/// a scratch directory"; both now say it is a kernel pseudo-filesystem with no disk behind it.
#[test]
fn a_kernel_pseudo_filesystem_is_refused_as_such() {
    let db = tempfile::tempdir().unwrap();
    let err = refused(&check(&db.path().join("r.db"), Path::new("/proc"), &[]));
    assert!(
        err.contains("/proc is on proc, a kernel pseudo-filesystem") && !err.contains("--size"),
        "{err}"
    );
    let out = dt(&db.path().join("r.db"))
        .args(["--no-save", "assess", "/sys"])
        .output()
        .unwrap();
    let err = refused(&out);
    assert!(
        err.contains("/sys is on sysfs, a kernel pseudo-filesystem"),
        "{err}"
    );
}

/// QA (session 24): two `check etcd DIR` started together: the second was told that a killed
/// run may have left `etcd.0.0` and to pass --destructive, which would have had both runs write
/// one file. A file the run would lay out that another process has open is named as in use, with
/// that process, and no --destructive is offered. (Here the other run is a process holding the
/// file open.)
#[test]
fn a_file_another_run_holds_open_is_named_in_use() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = d.path().join("etcd.0.0");
    std::fs::write(&f, vec![0u8; 4096]).unwrap();
    let mut other = std::process::Command::new("sleep")
        .arg("60")
        .stdin(std::fs::File::open(&f).unwrap())
        .spawn()
        .unwrap();
    let out = check(&d.path().join("db"), d.path(), &[]);
    let _ = other.kill();
    let _ = other.wait();
    let err = refused(&out);
    assert!(
        err.contains(&format!(
            "is open in another process now (pid {} (sleep))",
            other.id()
        )),
        "{err}"
    );
    assert!(!err.contains("--destructive"), "{err}");
    // Nobody holds it now: the file is an ordinary leftover again.
    let err = refused(&check(&d.path().join("db"), d.path(), &[]));
    assert!(err.contains("--destructive"), "{err}");
}

/// QA on dt-s23: `check etcd DIR --direct` on tmpfs said "bs=2300 is not a multiple of 512
/// bytes, which O_DIRECT on DIR needs: use a multiple of 512 or pass --direct=false", and with
/// `--bs 4k` then "DIR is on tmpfs, which has no O_DIRECT": the fix that works came second. The
/// target's O_DIRECT is the first thing said, whatever the block size; on a filesystem that takes
/// O_DIRECT the alignment is still refused as before.
#[test]
fn direct_on_tmpfs_is_refused_for_tmpfs_before_the_block_size() {
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let db = d.path().join("db");
    let target = d.path().join("etcd");
    std::fs::create_dir(&target).unwrap();
    for args in [
        &["--direct", "--quick"][..],
        &["--direct", "--quick", "--bs", "4k"],
        &["--direct", "--quick", "--profile", "etcd-openshift"],
    ] {
        let err = refused(&check(&db, &target, args));
        assert!(
            err.contains("is on tmpfs, which has no O_DIRECT: pass --direct=false")
                && !err.contains("multiple of 512"),
            "{args:?}: {err}"
        );
    }
    let disk = tempfile::tempdir_in("/var/tmp").unwrap();
    let fs = disktier_engine::inspect(disk.path()).unwrap().fs_type;
    if matches!(fs.as_deref(), Some("tmpfs" | "ramfs")) {
        eprintln!("skip: /var/tmp is on {fs:?}, which takes no O_DIRECT");
        return;
    }
    let err = refused(&check(&db, disk.path(), &["--direct", "--quick"]));
    assert!(err.contains("bs=2300 is not a multiple of 512"), "{err}");
}

/// QA (session 26): a target in /dev that does not exist (a typo, a disk not attached yet) was
/// taken as a new file to create: `bench /dev/typo` and `trace record /dev/typo` made, used and
/// removed a regular file in devtmpfs, exit 0, and `check etcd /dev/typo` advised
/// `mkdir -p /dev/typo`. Each is now refused naming the device, and nothing is made in /dev.
/// (/dev/shm is a filesystem of its own, where the tests make their files as before.)
#[test]
fn a_missing_name_in_dev_is_no_file_to_create() {
    let name = format!("/dev/disktier-test-no-such-{}", std::process::id());
    let args: [&[&str]; 3] = [
        &[
            "bench",
            &name,
            "--rw",
            "randread",
            "--size",
            "1m",
            "--runtime",
            "1s",
        ],
        &["check", "etcd", &name],
        &[
            "trace",
            "record",
            &name,
            "-o",
            "/dev/null",
            "--rw",
            "randread",
            "--size",
            "1m",
        ],
    ];
    for a in args {
        let out = disktier_testkit::cli::disktier()
            .arg("--no-save")
            .args(a)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert!(
            err.contains(&format!(
                "{name} does not exist: a name in /dev is a device's"
            )),
            "{a:?}: {err}"
        );
        assert!(!err.contains("mkdir"), "{a:?}: {err}");
        assert!(!Path::new(&name).exists(), "{a:?} left {name}");
    }
}
