//! `disktier interfere` driven as a user drives it, on loop devices with a real xfs: the JSON
//! document's shape (what the store and the report read), unavailable mitigations with their
//! reason, bad input, and the restore path after the run is SIGKILLed mid-scenario.

use assert_cmd::Command;
use disktier_testkit::cli::disktier;
use disktier_testkit::cli::judged_json;
use disktier_testkit::cli::stdout_ok;
use disktier_testkit::cli::Succeeds;
use disktier_testkit::kube::wait_until;
use disktier_testkit::{require_loop, LoopDev};
use disktier_testkit::{serial_loop_fs, serial_throttleable_fs};
use predicates::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

fn bin() -> Command {
    disktier()
}

/// Loop-device tests change a device's scheduler and the cgroup root: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A refusal case: its name, DISKTIER_RUN_DIR, the arguments after `--no-save interfere` and
/// what stderr names.
type Refusal<'a> = (&'a str, Option<&'a Path>, Vec<&'a str>, &'a [&'a str]);

#[test]
fn unknown_mitigation_is_refused_naming_it_and_the_choices() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().to_str().unwrap();
    let odd = t.path().join("a\nb");
    std::fs::create_dir(&odd).unwrap();
    let run = t.path().join("run");
    let cases: [Refusal; 4] = [
        (
            "an unknown mitigation",
            None,
            vec![dir, "--mitigations", "none,turbo"],
            &["turbo", "ionice-idle"],
        ),
        (
            "an unknown aggressor",
            None,
            vec![dir, "--aggressor", "dd"],
            &["\"dd\"", "bulk-seq"],
        ),
        (
            "a control character in the path",
            Some(&run),
            vec![odd.to_str().unwrap()],
            &["control character"],
        ),
        (
            "a missing path",
            None,
            vec!["/nonexistent/etcd"],
            &["/nonexistent/etcd"],
        ),
    ];
    for (case, run_dir, args, needles) in cases {
        let mut c = bin();
        if let Some(r) = run_dir {
            c.env("DISKTIER_RUN_DIR", r);
        }
        c.args(["--no-save", "interfere"])
            .args(&args)
            .stderr_of_exit_naming(case, 2, needles);
    }
}

/// Regression (QA): `--threshold 0ms` failed every scenario, `--aggressor-cap 0s` stopped the
/// aggressor before it wrote, and a throttle of 0 failed only after the baseline had run
/// (cgroup v1 deletes a rule of 0). Each is refused before anything runs, with the reason.
#[test]
fn zero_limits_are_refused_before_anything_runs() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().to_str().unwrap();
    let cases: [(&str, &[&str]); 6] = [
        ("--threshold", &["--threshold", "0ms"]),
        ("--aggressor-cap", &["--aggressor-cap", "0s"]),
        ("--throttle-bps", &["--throttle-bps", "0"]),
        ("--throttle-bps", &["--throttle-bps", "0MiB/s"]),
        ("--throttle-iops", &["--throttle-iops", "0"]),
        ("--repeat", &["--repeat", "0"]),
    ];
    for (flag, args) in cases {
        let why = if flag.starts_with("--throttle") {
            "deletes a blkio throttle rule"
        } else {
            "0"
        };
        bin()
            .env("DISKTIER_RUN_DIR", t.path().join("run"))
            .args(["--no-save", "interfere", dir])
            .args(args)
            .stderr_of_exit_naming(&args.join(" "), 2, &[flag, why]);
        // Refused before the run directory (the journal) or a scratch directory was made.
        assert!(!t.path().join("run").exists(), "{args:?}");
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0, "{args:?}");
    }
}

/// Regression (QA): a throttle of u64::MAX (the kernel's "no limit") was accepted and the run
/// failed after the baseline ("the kernel did not accept the setting"), and a cap shorter than
/// --duration was accepted but not kept. Each is refused before anything runs, with the reason.
#[test]
fn limits_that_cannot_hold_are_refused_before_anything_runs() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().to_str().unwrap();
    let max = u64::MAX.to_string();
    let cases: [(&[&str], &[&str]); 5] = [
        (&["--throttle-bps", &max], &["--throttle-bps", "no limit"]),
        (&["--throttle-iops", &max], &["--throttle-iops", "no limit"]),
        (
            &["--throttle-iops", "4294967295"],
            &["--throttle-iops", "no limit"],
        ),
        (
            &["--aggressor-cap", "1500ms", "--duration", "4s"],
            &["--aggressor-cap 1500ms is shorter than --duration 4s"],
        ),
        (
            &["--aggressor-cap", "1ms", "--duration", "4s"],
            &["--aggressor-cap 1ms"],
        ),
    ];
    for (args, needles) in cases {
        bin()
            .env("DISKTIER_RUN_DIR", t.path().join("run"))
            .args(["--no-save", "interfere", dir])
            .args(args)
            .stderr_of_exit_naming(&args.join(" "), 2, needles);
        assert!(!t.path().join("run").exists(), "{args:?}");
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0, "{args:?}");
    }
}

/// QA on dt-s23: `interfere /proc` (and a cgroup tree) said "/proc has 0 bytes free, but the
/// aggressor writes 16777216 (plus room for the probe): pass a smaller --aggressor-size", and with
/// `--aggressor-cmd`, which takes no size, "writes 0 ...: pass a smaller --aggressor-size". A
/// pseudo-filesystem is named as one; a full filesystem asks a command for room, not a size.
#[test]
fn a_pseudo_filesystem_or_no_room_is_refused_with_a_fix_that_applies() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("run");
    let refuse = |dir: &Path, args: &[&str], needles: &[&str], not: &str| {
        let err = bin()
            .env("DISKTIER_RUN_DIR", &run)
            .args(["--no-save", "interfere"])
            .arg(dir)
            .args(["--duration", "2s", "--mitigations", "none"])
            .args(args)
            .stderr_of_exit_naming(&format!("{} {args:?}", dir.display()), 2, needles);
        assert!(!err.contains(not), "{err}");
    };
    for (dir, fs) in [("/proc", "proc"), ("/sys/kernel", "sysfs")] {
        let on = format!("{dir} is on {fs}, a kernel pseudo-filesystem");
        refuse(
            Path::new(dir),
            &["--aggressor", "bulk-seq", "--aggressor-size", "16m"],
            &[&on],
            "bytes free",
        );
        refuse(
            Path::new(dir),
            &["--aggressor-cmd", "true"],
            &[&on],
            "bytes free",
        );
    }
    let Some(small) = disktier_testkit::Mount::tmpfs_if_root(32 << 20) else {
        return;
    };
    refuse(
        &small.dir,
        &["--aggressor-cmd", "true"],
        &["free, but the probe needs 64 MiB", "free some space there"],
        "--aggressor-size",
    );
    refuse(
        &small.dir,
        &["--aggressor", "bulk-seq", "--aggressor-size", "16m"],
        &[
            "the aggressor writes 16 MiB and the probe needs 64 MiB",
            "pass a smaller --aggressor-size",
        ],
        // QA: the sizes were raw bytes ("has 33554432 bytes free, but the aggressor writes
        // 16777216 and the probe needs 67108864"); human units now.
        "bytes free",
    );
    // QA: the largest size overflowed the room check (a panic in a debug build; a release
    // build wrapped it to 64 MiB - 1 and started a writer of 16 EiB).
    refuse(
        t.path(),
        &[
            "--aggressor",
            "bulk-seq",
            "--aggressor-size",
            "18446744073709551615",
        ],
        &[
            "the aggressor writes 16384.00 PiB (18446744073709551615 bytes) and the probe needs 64 MiB",
            "pass a smaller --aggressor-size",
        ],
        "panicked",
    );
    assert!(!run.join("interfere.journal").exists());
    assert!(!run.join("interfere.journal").exists());
}

/// QA on dt-s23: `interfere DIR` on a read-only filesystem failed naming the scratch directory
/// it could not create and the OS error only ("DIR/.disktier-interfere-N-T: Read-only file
/// system (os error 30)"); it now says DIR is read-only and what to do, as check etcd does.
#[test]
fn a_read_only_directory_is_refused_as_such() {
    let Some(ro) = disktier_testkit::Mount::tmpfs_if_root(128 << 20) else {
        return;
    };
    ro.remount("ro");
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("run");
    let err = bin()
        .env("DISKTIER_RUN_DIR", &run)
        .args(["--no-save", "interfere"])
        .arg(&ro.dir)
        .args([
            "--duration",
            "2s",
            "--mitigations",
            "none",
            "--aggressor-cmd",
            "true",
        ])
        .stderr_of_exit_naming(
            "read-only",
            2,
            &[
                &format!("{} is on a read-only filesystem", ro.dir.display()),
                "remount it read-write",
            ],
        );
    assert!(!err.contains(".disktier-interfere-"), "{err}");
    assert!(!run.join("interfere.journal").exists());
}

#[test]
fn restore_with_nothing_to_do_is_a_no_op() {
    let run = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        restore_finds_nothing(run.path());
    }
}

/// `interfere --restore` with run directory `run`, run to completion.
fn restore(run: &Path) -> assert_cmd::assert::Assert {
    bin()
        .env("DISKTIER_RUN_DIR", run)
        .args(["interfere", "--restore"])
        .assert()
}

/// `interfere --restore` with run directory `run` succeeds and has nothing to do.
fn restore_finds_nothing(run: &Path) {
    restore(run)
        .success()
        .stdout(predicate::str::contains("nothing to restore"));
}

#[test]
fn json_has_the_documented_shape_and_reports_unavailable_mitigations() {
    let Some((_g, dev, mnt)) = serial_loop_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let db = tempfile::tempdir().unwrap();
    let out = bin()
        .env("DISKTIER_RUN_DIR", run.path())
        .env("DISKTIER_DB", db.path().join("r.db"))
        .args(["--format", "json", "interfere"])
        .arg(&mnt.dir)
        .args("--aggressor bulk-seq --aggressor-size 24MiB --duration 2s --mitigations none,cgroup-latency".split_whitespace())
        .output()
        .unwrap();
    let v: serde_json::Value = judged_json(&out);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["device"], dev.name());
    assert!(v["target"].as_str().unwrap().contains("disktier-mnt"));
    assert!(v["scheduler_before"].is_string());
    assert!(v["recommendation"]
        .as_str()
        .unwrap()
        .contains("fdatasync p99"));
    let sc = v["scenarios"].as_array().unwrap();
    assert_eq!(sc.len(), 3);
    assert_eq!(sc[0]["name"], "baseline");
    assert!(sc[0]["aggressor"].is_null());
    assert!(
        sc[0]["probe"]["lat_ns"]["percentiles"]["99"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(sc[0]["probe_iops"].as_f64().unwrap() > 0.0);
    assert_eq!(sc[1]["name"], "bulk-seq/none");
    assert_eq!(sc[1]["mitigation"], "none");
    assert_eq!(sc[1]["available"], true);
    assert_eq!(sc[1]["aggressor"]["bytes"], 24 << 20);
    assert!(sc[1]["aggressor"]["seconds"].as_f64().unwrap() > 0.0);
    assert!(["pass", "fail"].contains(&sc[1]["verdict"].as_str().unwrap()));
    // cgroup v2 has no io controller on these machines (v1 blkio holds it): reported, not skipped.
    let v2_io = std::fs::read_to_string("/sys/fs/cgroup/unified/cgroup.controllers")
        .is_ok_and(|c| c.split_whitespace().any(|c| c == "io"));
    if !v2_io {
        assert_eq!(sc[2]["available"], false);
        assert_eq!(sc[2]["verdict"], "unavailable");
        assert!(sc[2]["probe"].is_null());
        let why = sc[2]["unavailable_reason"].as_str().unwrap();
        assert!(why.contains("io controller"), "{why}");
    }
    // Nothing left behind.
    assert!(!run.path().join("interfere.journal").exists());
    let left: Vec<_> = std::fs::read_dir(&mnt.dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".disktier-interfere-")
        })
        .collect();
    assert!(left.is_empty());
}

fn scheduler(dev: &LoopDev) -> String {
    let s = std::fs::read_to_string(format!("/sys/block/{}/queue/scheduler", dev.name())).unwrap();
    s.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap()
        .to_string()
}

fn our_cgroups(pid: u32) -> Vec<String> {
    std::fs::read_dir("/sys/fs/cgroup/blkio")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("disktier-interfere-{pid}")))
        .collect()
}

fn scratch(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".disktier-interfere-"))
        .collect()
}

/// Starts a run whose second scenario (cgroup-weight: scheduler switched to bfq, the aggressor
/// in a blkio cgroup) lasts long, and SIGKILLs it once both changes are in place.
/// A run killed mid-way on a fresh xfs (one test at a time): the lock, the device, its mount,
/// the run directory, the scheduler before the run and the killed run's pid. `None` where loop
/// devices or cgroup v1 blkio are missing.
fn killed_run() -> Option<Killed> {
    if !disktier_testkit::BlkioThrottle::available() {
        return None;
    }
    let (serial, dev, mnt) = serial_loop_fs(&SERIAL, 512 << 20, "xfs")?;
    let run = tempfile::tempdir().unwrap();
    let before = scheduler(&dev);
    let pid = start_and_kill(&dev, &mnt.dir, run.path());
    Some(Killed {
        pid,
        before,
        run,
        mnt,
        dev,
        _serial: serial,
    })
}

/// What [`killed_run`] leaves; dropped in field order (the mount before the device, the lock
/// last).
struct Killed {
    pid: u32,
    before: String,
    run: tempfile::TempDir,
    mnt: disktier_testkit::Mount,
    dev: LoopDev,
    _serial: std::sync::MutexGuard<'static, ()>,
}

fn start_and_kill(dev: &LoopDev, dir: &Path, run_dir: &Path) -> u32 {
    let exe = assert_cmd::cargo::cargo_bin("disktier");
    let mut child = std::process::Command::new(exe)
        .env("DISKTIER_RUN_DIR", run_dir)
        .args(["--no-save", "--quiet", "interfere"])
        .arg(dir)
        .args("--duration 6s --aggressor-size 64MiB --mitigations cgroup-weight".split_whitespace())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let before = scheduler(dev);
    // Baseline (6 s), then the switch: wait for both the scheduler and the cgroup.
    wait_until(
        Duration::from_secs(60),
        "the scheduler switch and the cgroup",
        || scheduler(dev) == "bfq" && !our_cgroups(pid).is_empty(),
    );
    assert_ne!(before, "bfq");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(
        scheduler(dev),
        "bfq",
        "a killed run cannot undo anything itself"
    );
    let journal = std::fs::read_to_string(run_dir.join("interfere.journal")).unwrap();
    assert!(
        journal.contains(&format!("scheduler of {} was {before}", dev.name())),
        "{journal}"
    );
    assert!(journal.contains("created cgroup"), "{journal}");
    assert!(!scratch(dir).is_empty());
    pid
}

#[test]
fn restore_undoes_what_a_killed_run_left() {
    let Some(k) = killed_run() else {
        return;
    };
    restore(k.run.path())
        .success()
        .stdout(predicate::str::contains(format!(
            "undone: scheduler of {}",
            k.dev.name()
        )));
    assert_eq!(scheduler(&k.dev), k.before);
    assert!(our_cgroups(k.pid).is_empty(), "{:?}", our_cgroups(k.pid));
    assert!(scratch(&k.mnt.dir).is_empty(), "{:?}", scratch(&k.mnt.dir));
    assert!(!k.run.path().join("interfere.journal").exists());
    // Idempotent.
    restore_finds_nothing(k.run.path());
}

#[test]
fn the_next_run_undoes_what_a_killed_run_left() {
    let Some(k) = killed_run() else {
        return;
    };
    let out = bin()
        .env("DISKTIER_RUN_DIR", k.run.path())
        .args(["--no-save", "--format", "json", "interfere"])
        .arg(&k.mnt.dir)
        .args(
            "--duration 1s --mitigations writer-no-fsync --aggressor-size 8MiB".split_whitespace(),
        )
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let undone = v["restored_leftovers"].as_array().unwrap();
    assert!(
        undone
            .iter()
            .any(|u| u.as_str().unwrap().starts_with("scheduler of")),
        "{undone:?}"
    );
    assert_eq!(scheduler(&k.dev), k.before);
    assert!(our_cgroups(k.pid).is_empty());
    assert!(scratch(&k.mnt.dir).is_empty());
}

/// Starts a run whose scenario switches the scheduler to bfq, waits until the switch and the
/// scratch directory are in place, sends `signals` (one after another), and checks that the
/// process undid everything before it exited, with exit status 2 and the signal named.
/// `disktier --no-save --format json interfere DIR ARGS` started with its journal in
/// `run_dir`, its output piped, and its pid for signals.
fn spawn_interfere(
    dir: &Path,
    run_dir: &Path,
    args: &str,
) -> (std::process::Child, rustix::process::Pid) {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("disktier"))
        .env("DISKTIER_RUN_DIR", run_dir)
        .args(["--no-save", "--format", "json", "interfere"])
        .arg(dir)
        .args(args.split_whitespace())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    (child, pid)
}

fn signalled_run_restores(signals: &[libc::c_int], name: &str) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = LoopDev::new(512 << 20);
    let mnt = dev.mkfs_mount("xfs");
    let run = tempfile::tempdir().unwrap();
    let before = scheduler(&dev);
    assert_ne!(before, "bfq");
    let (child, pid) = spawn_interfere(
        &mnt.dir,
        run.path(),
        "--duration 4s --aggressor bulk-seq --aggressor-size 64MiB --mitigations scheduler-bfq",
    );
    wait_until(Duration::from_secs(60), "the scheduler switch", || {
        scheduler(&dev) == "bfq"
    });
    assert!(!scratch(&mnt.dir).is_empty());
    for (i, sig) in signals.iter().enumerate() {
        // kill(2) with the pid of the child this test started.
        let sig = rustix::process::Signal::from_named_raw(*sig).unwrap();
        rustix::process::kill_process(pid, sig).unwrap();
        if i == 0 && signals[1..].iter().any(|s| s != &signals[0]) {
            // Two different signals pending at once are delivered in signal number order,
            // whatever order they were sent in (CI, on a loaded machine, had SIGTERM and then
            // SIGINT 150 ms later named SIGINT): the next is sent once the first has been
            // taken, which the run's undo of the scheduler shows.
            wait_until(Duration::from_secs(30), "the first signal's undo", || {
                scheduler(&dev) == before
            });
        }
        std::thread::sleep(Duration::from_millis(150));
    }
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "took {:?}",
        t.elapsed()
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{name}: {:?} {err}", out.status);
    assert!(err.contains(&format!("interrupted by {name}")), "{err}");
    assert_eq!(scheduler(&dev), before, "{name}: scheduler not restored");
    assert!(scratch(&mnt.dir).is_empty(), "{:?}", scratch(&mnt.dir));
    assert!(!run.path().join("interfere.journal").exists());
    // The partial result was still printed, the scenario the signal cut marked interrupted
    // (not capped: QA saw "0 B in 1.6 s (capped)" and "stopped at the cap").
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    let last = v["scenarios"].as_array().unwrap().last().unwrap();
    assert_eq!(last["name"], "bulk-seq/scheduler-bfq", "{name}: {v}");
    assert_eq!(last["interrupted"], true, "{name}: {last}");
    assert_ne!(last["aggressor"]["capped"], true, "{name}: {last}");
    let notes = last["notes"].to_string();
    assert!(
        notes.contains("interrupted (Ctrl-C or a signal)") && !notes.contains("cap"),
        "{name}: {notes}"
    );
}

#[test]
fn sigterm_sighup_and_sigquit_undo_every_change_before_exit() {
    if !require_loop() {
        return;
    }
    signalled_run_restores(&[libc::SIGTERM], "SIGTERM");
    signalled_run_restores(&[libc::SIGHUP], "SIGHUP");
    signalled_run_restores(&[libc::SIGQUIT], "SIGQUIT");
}

#[test]
fn a_second_ctrl_c_does_not_skip_the_undo() {
    if !require_loop() {
        return;
    }
    signalled_run_restores(&[libc::SIGINT, libc::SIGINT, libc::SIGINT], "SIGINT");
}

/// QA: SIGTERM and then Ctrl-C during a run ended in "interrupted by SIGINT": the message named
/// the last signal. The first one started the stop; a later one only arrives while the run
/// undoes its changes, and the exit status (2) is the same either way.
#[test]
fn the_first_of_two_different_signals_is_the_one_named() {
    if !require_loop() {
        return;
    }
    signalled_run_restores(&[libc::SIGTERM, libc::SIGINT], "SIGTERM");
    signalled_run_restores(&[libc::SIGHUP, libc::SIGTERM], "SIGHUP");
}

#[test]
fn a_planted_journal_is_refused_by_the_binary() {
    let run = tempfile::tempdir().unwrap();
    let victim = run.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let doc = serde_json::json!({"schema_version": 1, "owner_pid": 1, "entries": [
        {"id": 1, "what": "x", "kind": "scheduler", "device": "sda", "file": "/etc/passwd", "was": "none"}
    ]});
    std::fs::write(run.path().join("interfere.journal"), doc.to_string()).unwrap();
    restore(run.path())
        .code(2)
        .stderr(predicate::str::contains("nothing in it was replayed"));
    std::fs::remove_file(run.path().join("interfere.journal")).unwrap();
    std::fs::remove_file(run.path().join("interfere.lock")).unwrap();
    std::os::unix::fs::symlink(&victim, run.path().join("interfere.lock")).unwrap();
    restore(run.path())
        .code(2)
        .stderr(predicate::str::contains("symlink"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

/// `interfere --restore` run as an unprivileged user (nobody), with `env` set.
fn as_nobody(env: &[(&str, &Path)]) -> std::process::Output {
    let mut c = std::process::Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("disktier"))
        .args(["interfere", "--restore"])
        .env_remove("DISKTIER_RUN_DIR")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("HOME");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn a_non_root_journal_lives_in_a_private_dir_and_a_planted_tmp_dir_is_refused() {
    if !disktier_testkit::require(
        disktier_testkit::is_root() && disktier_testkit::have("setpriv"),
        "root and setpriv (running as another user)",
    ) {
        return;
    }
    let reachable = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("disktier"))
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !reachable {
        // A build directory under a private home (e.g. /root) is not executable by nobody.
        eprintln!("skipping: user nobody cannot run the test binary from this build directory");
        return;
    }
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // With a home: the journal directory is under it, 0700 and the user's, not in /tmp.
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(home.path(), Some(65534), Some(65534)).unwrap();
    let out = as_nobody(&[("HOME", home.path())]);
    stdout_ok(&out);
    let dir = home.path().join(".local/state/disktier");
    let md = std::fs::metadata(&dir).unwrap();
    assert_eq!(md.uid(), 65534);
    assert_eq!(md.permissions().mode() & 0o777, 0o700);
    // A relative XDG_RUNTIME_DIR is invalid (XDG Base Directory spec) and ignored: the home's
    // directory again, not one below wherever the command ran.
    let out = as_nobody(&[
        ("HOME", home.path()),
        ("XDG_RUNTIME_DIR", Path::new("rel-run")),
    ]);
    stdout_ok(&out);
    assert!(!Path::new("rel-run").exists());
    // Without one, /tmp/disktier-65534; another user planted it first: refused, not used.
    let planted = Path::new("/tmp/disktier-65534");
    if planted.exists() {
        eprintln!(
            "skipping the planted-dir half: {} exists",
            planted.display()
        );
        return;
    }
    std::fs::create_dir(planted).unwrap();
    std::fs::set_permissions(planted, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = as_nobody(&[]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    std::fs::remove_dir(planted).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not safe") && err.contains("uid 0"), "{err}");
}

#[test]
fn a_throttled_disk_shows_stalls_beside_the_percentiles() {
    let Some((_g, dev, mnt)) = serial_throttleable_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let run = tempfile::tempdir().unwrap();
    // 4 write IOPS for interfere and its children (the probe): every fdatasync waits for
    // throttled writes, 250 ms apart.
    let throttle = disktier_testkit::BlkioThrottle::new(&dev.maj_min(), 4, None);
    let mnt_s = mnt.dir.display().to_string();
    let out = throttle
        .wrap(
            Path::new(env!("CARGO_BIN_EXE_disktier")),
            &[
                "--no-save",
                "--format",
                "json",
                "interfere",
                &mnt_s,
                "--aggressor",
                "bulk-seq",
                "--aggressor-size",
                "4MiB",
                "--duration",
                "3s",
                "--mitigations",
                "none",
            ],
        )
        .env("DISKTIER_RUN_DIR", run.path())
        .output()
        .unwrap();
    let v: serde_json::Value = judged_json(&out);
    let sc = v["scenarios"].as_array().unwrap();
    for s in sc {
        let st = &s["probe"]["stalls"];
        let n = st["over_heartbeat"].as_u64().unwrap();
        let ios = s["probe"]["ios"].as_u64().unwrap();
        assert!(n >= 1 && n <= ios, "{}: {st} of {ios}", s["name"]);
    }
    let none = &sc[1]["probe"]["stalls"];
    let r = v["recommendation"].as_str().unwrap();
    assert!(
        r.contains(&format!(
            "{} over 100 ms (etcd's heartbeat interval)",
            disktier_engine::verdict::count_noun(
                none["over_heartbeat"].as_f64().unwrap(),
                "fsync",
                "fsyncs"
            )
        )),
        "{r}"
    );
    // Elections are expected only from fsyncs over the election timeout.
    let elections = none["over_election"].as_u64().unwrap() > 0;
    assert_eq!(
        r.contains("expect leader elections under this load"),
        elections,
        "{r}"
    );
    assert_eq!(
        r.contains(
            "heartbeats would be missed, but not for long enough that followers start an election"
        ),
        !elections,
        "{r}"
    );
}

/// `--repeat N` on a real xfs: N runs saved in one group, and a summary of what they agree on.
#[test]
fn repeat_runs_the_comparison_n_times_in_one_group_and_summarizes() {
    let Some((_g, _dev, mnt)) = serial_loop_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let db = tempfile::tempdir().unwrap();
    let db = db.path().join("r.db");
    let args = "interfere --aggressor bulk-seq --aggressor-size 16MiB --duration 1s --mitigations none,ionice-idle --repeat 2";
    let out = bin()
        .env("DISKTIER_RUN_DIR", run.path())
        .env("DISKTIER_DB", &db)
        .args(["--format", "json"])
        .args(args.split_whitespace())
        .arg(&mnt.dir)
        .output()
        .unwrap();
    let v: serde_json::Value = judged_json(&out);
    assert_eq!(v["kind"], "interfere-repeat");
    assert_eq!(v["interrupted"], false);
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    let s = &v["summary"];
    assert_eq!(s["runs"], 2);
    assert_eq!(s["winners"].as_array().unwrap().len(), 2);
    assert!(["stable", "unstable", "inconclusive"].contains(&s["verdict"].as_str().unwrap()));
    for w in s["winners"].as_array().unwrap() {
        assert!(
            ["none", "ionice-idle", "unranked"].contains(&w.as_str().unwrap()),
            "{w}"
        );
    }
    let names: Vec<&str> = s["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["baseline", "bulk-seq/none", "bulk-seq/ionice-idle"]);
    for x in s["scenarios"].as_array().unwrap() {
        assert_eq!(x["measured"], 2, "{x}");
        assert!(x["min_p99_ns"].as_u64().unwrap() <= x["max_p99_ns"].as_u64().unwrap());
    }
    // Both runs are in the store, in the summary's group, as ordinary interfere runs.
    let group = v["group_id"].as_str().unwrap();
    let ids: Vec<&str> = v["run_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    let listed = bin()
        .env("DISKTIER_DB", &db)
        .args(["history", "--group", group])
        .output()
        .unwrap();
    let listed = stdout_ok(&listed);
    for id in &ids {
        assert!(listed.contains(id), "{id} not in\n{listed}");
    }
    // Text: one line a run, then the summary.
    let out = bin()
        .env("DISKTIER_RUN_DIR", run.path())
        .args(["--no-save"])
        .args(args.split_whitespace())
        .arg(&mnt.dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for i in 1..=2 {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("run {i} of 2: ")))
            .unwrap_or_else(|| panic!("no line for run {i}: {text}"));
        assert!(
            [
                "best worst case: ",
                "no mitigation beat `none`",
                "not ranked ("
            ]
            .iter()
            .any(|c| line.contains(c)),
            "{line}"
        );
    }
    assert!(
        text.contains("across 2 runs:")
            && text.contains("best worst case by run (none: no mitigation beat it): 1: ")
            && ["STABLE: ", "UNSTABLE: ", "INCONCLUSIVE: "]
                .iter()
                .any(|v| text.contains(v)),
        "{text}"
    );
    assert!(!run.path().join("interfere.journal").exists());
}

/// A signal during `--repeat` ends the series: the run it cut is not counted, every change is
/// undone, and the exit is 2.
#[test]
fn ctrl_c_during_a_repeat_ends_the_series_without_counting_the_cut_run() {
    let Some((_g, _dev, mnt)) = serial_loop_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let (child, pid) = spawn_interfere(
        &mnt.dir,
        run.path(),
        "--duration 2s --aggressor bulk-seq --aggressor-size 16MiB --mitigations none --repeat 3",
    );
    // Into the second run: each run is a 2 s baseline and a 2 s scenario.
    std::thread::sleep(Duration::from_millis(5500));
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("interrupted by") && err.contains("of 3: it is not counted"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    // The cut run is shown, not counted (--no-save: it has no id).
    assert_eq!(v["interrupted_run"]["interrupted"], true, "{v}");
    assert!(v["interrupted_run_id"].is_null());
    let done = v["runs"].as_array().unwrap().len();
    assert!(done < 3, "{done} runs");
    assert_eq!(v["summary"]["runs"], done);
    assert!(scratch(&mnt.dir).is_empty(), "{:?}", scratch(&mnt.dir));
    assert!(!run.path().join("interfere.journal").exists());
}

/// QA: `interfere --restore DIR --mitigations bogus --duration 5s` exited 0 having undone the
/// journal and ignored the rest (the usage line even read `--restore [DIR]`): --restore takes
/// no directory and no run option.
#[test]
fn restore_refuses_a_directory_and_run_options() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().to_str().unwrap();
    for extra in [
        &[dir][..],
        &["--mitigations", "bogus"][..],
        &["--duration", "5s"][..],
        &["--aggressor", "bulk-seq"][..],
        &["--aggressor-cmd", "true"][..],
    ] {
        bin()
            .env("DISKTIER_RUN_DIR", t.path().join("run"))
            .args(["interfere", "--restore"])
            .args(extra)
            .stderr_of_exit_naming(&format!("{extra:?}"), 2, &["cannot be used with"]);
    }
    // Alone it still runs.
    let out = bin()
        .env("DISKTIER_RUN_DIR", t.path().join("run"))
        .args(["interfere", "--restore"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
