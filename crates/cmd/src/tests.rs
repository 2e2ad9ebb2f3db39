//! Unit tests of `lib.rs`.

use super::*;
use crate::stop::GRACE;

#[test]
fn quoting() {
    assert_eq!(shell_quote("/dev/loop0"), "/dev/loop0");
    assert_eq!(shell_quote("a b"), "'a b'");
    assert_eq!(shell_quote("it's"), "'it'\\''s'");
    assert_eq!(shell_quote(""), "''");
}

#[test]
fn real_runner_keeps_streams_on_failure() {
    let r = RealRunner;
    let err = r
        .run(&Cmd::new("sh").args(["-c", "echo out; echo bad >&2; exit 3"]))
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("exit status 3"), "{msg}");
    assert!(msg.contains("stderr: bad"), "{msg}");
    assert!(msg.contains("stdout: out"), "{msg}");
}

#[test]
fn a_command_past_its_timeout_is_killed_with_its_group() {
    let t = Instant::now();
    let pidfile = std::env::temp_dir().join(format!("disktier-cmd-pid-{}", std::process::id()));
    // The shell's child (sleep) is in the same process group and dies with it.
    let err = RealRunner
        .run(
            &Cmd::new("sh")
                .args([
                    "-c",
                    &format!(
                        "echo started; sleep 30 & echo $! > {}; wait",
                        pidfile.display()
                    ),
                ])
                .timeout(Duration::from_millis(300)),
        )
        .unwrap_err();
    let pid = take_pid(&pidfile);
    assert!(gone(pid), "the background sleep {pid} outlived the timeout");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    let msg = err.to_string();
    assert!(matches!(err, CmdError::Timeout { .. }), "{msg}");
    assert!(
        msg.contains("did not finish within 0.3s") && msg.contains("stdout: started"),
        "{msg}"
    );
    // A command within its time is untouched.
    let ok = RealRunner
        .run(
            &Cmd::new("sleep")
                .arg("0.1")
                .timeout(Duration::from_secs(10)),
        )
        .unwrap();
    assert!(ok.success());
}

/// Whether `pid` is gone (or a zombie nobody reaps), waiting up to 2 s.
/// The pid a test's shell wrote to `pidfile`; the file is removed.
fn take_pid(pidfile: &std::path::Path) -> i32 {
    let pid = std::fs::read_to_string(pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = std::fs::remove_file(pidfile);
    pid
}

fn gone(pid: i32) -> bool {
    let pid = rustix::process::Pid::from_raw(pid).expect("a child's pid is positive");
    (0..100).any(|_| {
        // kill(pid, 0): only checks whether the process exists.
        let alive = rustix::process::test_kill_process(pid).is_ok()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "));
        if alive {
            std::thread::sleep(Duration::from_millis(20));
        }
        !alive
    })
}

/// QA: Ctrl-C during `setup` left mkfs (in its own process group) writing to the disk.
#[test]
fn a_stop_ends_the_running_command_with_its_group_and_starts_no_other() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let stop = Arc::new(AtomicBool::new(false));
    let r = StoppableRunner::new(stop.clone());
    let pidfile = std::env::temp_dir().join(format!("disktier-stop-pid-{}", std::process::id()));
    let setter = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            stop.store(true, Ordering::SeqCst);
        })
    };
    let t = Instant::now();
    let err = r
        .run(
            &Cmd::new("sh")
                .args([
                    "-c",
                    &format!("sleep 30 & echo $! > {}; wait", pidfile.display()),
                ])
                .timeout(Duration::from_secs(60)),
        )
        .unwrap_err();
    setter.join().unwrap();
    assert!(matches!(err, CmdError::Stopped { .. }), "{err}");
    assert!(err.is_stop());
    assert!(
        t.elapsed() < GRACE + Duration::from_secs(2),
        "{:?}",
        t.elapsed()
    );
    let pid = take_pid(&pidfile);
    assert!(gone(pid), "the group's sleep {pid} outlived the stop");
    // Stopped: nothing else starts, but a clean-up does.
    let err = r.run(&Cmd::new("true")).unwrap_err();
    assert!(matches!(err, CmdError::NotStarted { .. }), "{err}");
    assert!(r.stopped());
    assert!(r.run(&Cmd::new("true").even_when_stopped()).is_ok());
}

/// Set by [`an_inherited_ignored_signal_is_seen_and_a_default_one_is_not`] for the copy of this
/// test binary it starts: the signals that copy must see ignored (its `SigIgn:` mask).
const EXPECT_IGNORED_ENV: &str = "DISKTIER_CMD_TEST_EXPECT_IGNORED";

/// How `nohup` starts a program: SIGHUP ignored (`trap '' HUP`, which exec keeps). This test
/// binary runs itself that way, and the copy checks what [`signal_ignored`] says in there.
#[test]
fn an_inherited_ignored_signal_is_seen_and_a_default_one_is_not() {
    use rustix::process::Signal;
    let (hup, usr2) = (Signal::HUP.as_raw(), Signal::USR2.as_raw());
    if let Ok(want) = std::env::var(EXPECT_IGNORED_ENV) {
        // The copy started below: SIGHUP ignored, SIGUSR2 at its default.
        assert_eq!(want, hup.to_string());
        assert!(signal_ignored(hup), "SIGHUP is ignored (trap '' HUP)");
        assert!(!signal_ignored(usr2), "SIGUSR2 is at its default");
        return;
    }
    // The harness leaves SIGUSR2 at its default (SIGHUP it may ignore: tests run under nohup).
    assert!(!signal_ignored(usr2));
    let exe = std::env::current_exe().unwrap();
    let name = "tests::an_inherited_ignored_signal_is_seen_and_a_default_one_is_not";
    let out = std::process::Command::new("/bin/sh")
        .args(["-c", "trap '' HUP; exec \"$0\" \"$@\""])
        .arg(&exe)
        .args(["--exact", name, "--test-threads", "1"])
        .env(EXPECT_IGNORED_ENV, hup.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn programs_come_from_the_trusted_directories_not_path() {
    // A directory on PATH with a "blkid" that is not the system's.
    let t = std::env::temp_dir().join(format!("disktier-path-{}", std::process::id()));
    std::fs::create_dir_all(&t).unwrap();
    let fake = t.join("disktier-fake-tool");
    std::fs::write(&fake, "#!/bin/sh\necho fake\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    // which() does not read PATH at all, so the fake is not found by name...
    assert_eq!(which("disktier-fake-tool"), None);
    // ...but an absolute path works, a relative one never does.
    assert_eq!(which(fake.to_str().unwrap()), Some(fake.clone()));
    assert!(matches!(
        RealRunner.output(&Cmd::new("./disktier-fake-tool")),
        Err(CmdError::NotAbsolute { .. })
    ));
    let sh = which("sh").unwrap();
    assert!(
        TRUSTED_DIRS.iter().any(|d| sh.starts_with(d)),
        "{}",
        sh.display()
    );
    std::fs::remove_dir_all(&t).unwrap();
}

#[test]
fn every_setup_tool_has_a_default_timeout() {
    for p in [
        "blkid",
        "wipefs",
        "udevadm",
        "mount",
        "mkfs.xfs",
        "mkfs.ext4",
        "mdadm",
        "cp",
    ] {
        assert!(default_timeout(p).is_some(), "{p}");
    }
    assert_eq!(
        default_timeout("fio"),
        None,
        "fio's runner bounds it by the job"
    );
}

#[test]
fn missing_program_names_the_package() {
    let err = RealRunner.run(&Cmd::new("mkfs.doesnotexist")).unwrap_err();
    assert!(matches!(err, CmdError::NotFound { .. }));
}

#[test]
fn recording_runner_answers_and_records() {
    let r = RecordingRunner::new();
    r.once("blkid", &["-p"], 2, "");
    r.on("blkid", &[], 0, "TYPE=xfs");
    assert_eq!(r.output(&Cmd::new("blkid").arg("-p")).unwrap().status, 2);
    assert_eq!(
        r.output(&Cmd::new("blkid").arg("-p")).unwrap().stdout,
        "TYPE=xfs"
    );
    assert_eq!(r.transcript(), "blkid -p\nblkid -p\n");
}
