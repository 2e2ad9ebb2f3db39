//! `disktier interfere --aggressor-cmd`: the user's own command as the aggressor, on a loop
//! device with a real xfs. It runs under each scenario's I/O class (the command itself reads
//! its class back with `ionice`), its exit status, time and written bytes reach the result, a
//! timeout stops it and everything it started, and after a SIGKILL of disktier, `--restore`
//! stops what the command left running.

use assert_cmd::Command;
use disktier_testkit::cli::disktier;
use disktier_testkit::cli::judged_json;
use disktier_testkit::kube::wait_until;
use disktier_testkit::serial_loop_fs;
use disktier_testkit::{require_loop, LoopDev};
use predicates::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

fn bin() -> Command {
    disktier()
}

/// Loop-device tests change a device's scheduler and the cgroup root: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Pids of `sleep` processes given `needle` (a unique length; disktier's own command line holds
/// it too, hence the check of the program).
fn running(needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| {
                    let argv: Vec<&[u8]> = c.split(|b| *b == 0).collect();
                    argv[0].ends_with(b"sleep") && argv.contains(&needle.as_bytes())
                })
                .unwrap_or(false)
        })
        .collect()
}

fn json_run(run: &Path, dir: &Path, cmd: &str, extra: &[&str]) -> serde_json::Value {
    let out = bin()
        .env("DISKTIER_RUN_DIR", run)
        .args(["--no-save", "--format", "json", "interfere"])
        .arg(dir)
        .args(["--aggressor-cmd", cmd, "--duration", "2s"])
        .args(extra)
        .output()
        .unwrap();
    judged_json(&out)
}

#[test]
fn a_command_that_a_shell_would_need_is_refused_with_the_fix() {
    let t = tempfile::tempdir().unwrap();
    for (cmd, says) in [
        ("tar xf /srv/update.tar | cat", "sh -c"),
        // Two lines are two commands to sh, never one with the second as arguments.
        (
            "tar xf /srv/update.tar\nsync",
            "a line break outside quotes",
        ),
        ("dd if=/dev/zero 'of=x", "quotes"),
        ("no-such-program-disktier --now", "PATH"),
        ("", "empty"),
    ] {
        bin()
            .args(["--no-save", "interfere"])
            .arg(t.path())
            .args(["--aggressor-cmd", cmd])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    // It replaces --aggressor and --aggressor-size.
    bin()
        .args(["--no-save", "interfere"])
        .arg(t.path())
        .args(["--aggressor-cmd", "true", "--aggressor", "ostree"])
        .assert()
        .code(2);
}

#[test]
fn a_real_command_runs_under_each_io_class_and_reports_its_exit_time_and_bytes() {
    if !require_loop() || !disktier_testkit::have("ionice") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = LoopDev::new(512 << 20);
    let mnt = dev.mkfs_mount("xfs");
    let run = tempfile::tempdir().unwrap();
    let seen = tempfile::tempdir().unwrap();
    let log = seen.path().join("ionice.txt");
    // The command records its own I/O class, then writes 32 MiB into its scratch directory.
    let cmd = format!(
        "sh -c 'ionice >> {}; dd if=/dev/zero of=big bs=1M count=32 conv=fsync status=none; test -s big'",
        log.display()
    );
    let v = json_run(
        run.path(),
        &mnt.dir,
        &cmd,
        &["--mitigations", "none,ionice-idle,ionice-be7"],
    );
    assert_eq!(v["aggressor_kind"], "command");
    assert_eq!(v["aggressor_command"], cmd.as_str());
    let sc = v["scenarios"].as_array().unwrap();
    assert_eq!(sc.len(), 4);
    for s in &sc[1..] {
        let a = &s["aggressor"];
        assert_eq!(a["exit"]["ended"], "code", "{s}");
        assert_eq!(a["exit"]["code"], 0, "{s}");
        assert_eq!(a["capped"], false);
        assert!(a["seconds"].as_f64().unwrap() > 0.0);
        // write_bytes accounting: at least the 32 MiB dd wrote.
        assert!(a["bytes"].as_u64().unwrap() >= 32 << 20, "{a}");
    }
    assert_eq!(sc[2]["name"], "command/ionice-idle");
    let classes: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(classes.len(), 3, "{classes:?}");
    assert!(!classes[0].starts_with("idle"), "{classes:?}");
    assert_eq!(classes[1], "idle", "{classes:?}");
    assert_eq!(classes[2], "best-effort: prio 7", "{classes:?}");
    // The writer-* mitigations cannot change a command's fsyncs: said, not faked.
    let v = json_run(
        run.path(),
        &mnt.dir,
        "sh -c 'exit 0'",
        &["--mitigations", "writer-no-fsync"],
    );
    let why = v["scenarios"][1]["unavailable_reason"].as_str().unwrap();
    assert!(why.contains("your own command"), "{why}");
    assert!(!run.path().join("interfere.journal").exists());
}

/// Runs `interfere` on a RAM-backed xfs (so that the probe passes and the exit is the writer's
/// to decide) beside `cmd`, which fails in both scenarios: exit 2 with `every` (how it failed
/// in each) when the probe passed, 1 when it failed anyway; returns the JSON document.
fn beside_a_failing_writer(cmd: &str, every: &str) -> serde_json::Value {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = LoopDev::in_dir(Path::new("/dev/shm"), 512 << 20);
    let mnt = dev.mkfs_mount("xfs");
    let run = tempfile::tempdir().unwrap();
    let out = bin()
        .env("DISKTIER_RUN_DIR", run.path())
        .args(["--no-save", "--format", "json", "interfere"])
        .arg(&mnt.dir)
        .args(["--aggressor-cmd", cmd])
        .args(["--duration", "2s", "--mitigations", "none,ionice-idle"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the document");
    let probe_passed = v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["verdict"] != "fail");
    if probe_passed {
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let said = format!(
            "the writer command failed in every scenario (none: {every}, ionice-idle: {every})"
        );
        assert!(stderr.contains(&said), "{stderr}");
    } else {
        assert_eq!(out.status.code(), Some(1), "{stderr}");
    }
    v
}

/// A command that failed is reported with its status and stderr, and a run whose writer
/// failed in every scenario is no pass: exit 2 naming each scenario's status, not the 0 that
/// said etcd held beside a writer that never did its work (QA); 1 when the probe failed anyway.
#[test]
fn a_failing_command_is_reported_with_its_status_and_stderr() {
    if !require_loop() {
        return;
    }
    let v = beside_a_failing_writer("sh -c 'echo tar: boom >&2; exit 3'", "exit 3");
    let s = &v["scenarios"][1];
    assert_eq!(s["aggressor"]["exit"]["code"], 3, "{s}");
    let notes = s["notes"].to_string();
    assert!(
        notes.contains("exit status 3") && notes.contains("tar: boom"),
        "{notes}"
    );
}

/// QA: a command killed by SIGKILL (the OOM killer's signal; not the cap's) after writing, in
/// every scenario, was ranked ("Best worst case: scheduler-bfq") and its note read "ended with
/// killed by signal 9"; it failed as a non-zero exit does: not ranked, exit 2 when the probe
/// passed.
#[test]
fn a_command_killed_by_a_signal_failed() {
    if !require_loop() {
        return;
    }
    let cmd = "sh -c 'dd if=/dev/zero of=x bs=1M count=8 status=none; kill -KILL $$'";
    let v = beside_a_failing_writer(cmd, "signal 9");
    let s = &v["scenarios"][1];
    assert_eq!(s["aggressor"]["exit"]["signal"], 9, "{s}");
    assert_eq!(s["aggressor"]["capped"], false, "{s}");
    assert!(
        s["notes"].to_string().contains("was killed by signal 9"),
        "{s}"
    );
    let r = v["recommendation"].as_str().unwrap();
    assert!(
        r.contains("The writer failed in none (signal 9), ionice-idle (signal 9)"),
        "{r}"
    );
}

#[test]
fn the_command_gets_the_terminal_signals_at_their_defaults() {
    // disktier's aggressor process ignores SIGINT; a non-interactive sh that inherited the
    // ignored disposition would survive its own SIGINT and exit 0. Killed by it, the command
    // failed: exit 2 when the probe passed, 1 when it did not (the document is printed either
    // way).
    let Some((_g, _dev, mnt)) = serial_loop_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let out = bin()
        .env("DISKTIER_RUN_DIR", run.path())
        .args(["--no-save", "--format", "json", "interfere"])
        .arg(&mnt.dir)
        .args(["--aggressor-cmd", "sh -c 'kill -INT $$; exit 0'"])
        .args(["--duration", "2s", "--mitigations", "none"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(1 | 2)), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the document");
    let a = &v["scenarios"][1]["aggressor"];
    assert_eq!(a["exit"]["ended"], "signal", "{a}");
    assert_eq!(a["exit"]["signal"], libc::SIGINT, "{a}");
}

#[test]
fn the_timeout_stops_the_command_and_what_it_started() {
    let Some((_g, _dev, mnt)) = serial_loop_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let v = json_run(
        run.path(),
        &mnt.dir,
        "sh -c 'sleep 777.25 & sleep 600.75'",
        &["--mitigations", "none", "--aggressor-cap", "3s"],
    );
    assert!(t0.elapsed() < Duration::from_secs(60));
    let a = &v["scenarios"][1]["aggressor"];
    assert_eq!(a["capped"], true, "{a}");
    // SIGTERM to the group: sh dies of it.
    assert_eq!(a["exit"]["ended"], "signal", "{a}");
    assert!(a["seconds"].as_f64().unwrap() <= 3.5, "{a}");
    assert!(running("777.25").is_empty() && running("600.75").is_empty());
    assert!(!run.path().join("interfere.journal").exists());
}

#[test]
fn restore_stops_what_the_command_left_after_disktier_was_killed() {
    let Some((_g, _dev, mnt)) = serial_loop_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let exe = assert_cmd::cargo::cargo_bin("disktier");
    let mut child = std::process::Command::new(exe)
        .env("DISKTIER_RUN_DIR", run.path())
        .args(["--no-save", "--quiet", "interfere"])
        .arg(&mnt.dir)
        .args([
            "--aggressor-cmd",
            "sh -c 'sleep 901.5 & sleep 902.5'",
            "--duration",
            "3s",
            "--mitigations",
            "none",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(90), "the command", || {
        !running("901.5").is_empty() && !running("902.5").is_empty()
    });
    child.kill().unwrap(); // SIGKILL: nothing of disktier runs its own cleanup
    child.wait().unwrap();
    let journal = std::fs::read_to_string(run.path().join("interfere.journal")).unwrap();
    assert!(
        journal.contains("\"group\": true") || journal.contains("\"group\":true"),
        "{journal}"
    );
    bin()
        .env("DISKTIER_RUN_DIR", run.path())
        .args(["interfere", "--restore"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "undone: started aggressor process",
        ));
    wait_until(
        Duration::from_secs(10),
        "the command's processes to go",
        || running("901.5").is_empty() && running("902.5").is_empty(),
    );
    assert!(!run.path().join("interfere.journal").exists());
}

/// QA: `sh -c 'setsid sleep 301 & exit 0'` left `sleep 301` running after interfere exited:
/// a new session leaves the command's process group, so stopping the group missed it. What
/// the command left running is killed when it exits, whatever its session.
#[test]
fn what_the_command_started_in_a_new_session_is_stopped_when_it_exits() {
    if !disktier_testkit::require(disktier_testkit::have("setsid"), "setsid") {
        return;
    }
    let Some((_g, _dev, mnt)) = serial_loop_fs(&SERIAL, 512 << 20, "xfs") else {
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let v = json_run(
        run.path(),
        &mnt.dir,
        "sh -c 'setsid sleep 301.375 & exit 0'",
        &["--mitigations", "none"],
    );
    let a = &v["scenarios"][1]["aggressor"];
    assert_eq!(a["exit"]["code"], 0, "{a}");
    let left = running("301.375");
    for pid in &left {
        // Leave nothing behind, even when the test fails.
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    assert!(left.is_empty(), "left running: {left:?}");
    assert!(!run.path().join("interfere.journal").exists());
}
