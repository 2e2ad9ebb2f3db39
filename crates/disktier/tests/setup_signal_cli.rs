//! QA: Ctrl-C or SIGTERM during `disktier setup` ended disktier silently (130) and left mkfs,
//! which runs in a process group of its own that a terminal's Ctrl-C does not reach, writing to
//! the disk. Now the signal stops mkfs with its group and waits for it, erases what it half
//! made, and the error (exit 2) says what state the disk is in and how to go on; a re-run
//! finishes. On a real loop device, its writes throttled (cgroup v1 blkio) so that the signal
//! lands while mkfs runs.

use disktier_testkit::cli::Succeeds;
use disktier_testkit::{
    blkid, is_mount_point, loop_with_mount_point, require_loop_xfs, BlkioThrottle, LoopDev,
};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The pids of live processes whose command line names `needle` (as one argument).
fn processes_naming(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = e.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let zombie =
            std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| s.contains(") Z "));
        if !zombie && cmdline.split(|b| *b == 0).any(|a| a == needle.as_bytes()) {
            out.push(pid);
        }
    }
    out
}

/// Runs `setup` on `dev` for `mount` in `throttle`'s cgroup, in a process group of its own (a
/// terminal's foreground job), sends `signal` after `after` (to the whole group, as Ctrl-C
/// does, when `group`), and waits for it.
fn interrupted_setup(
    throttle: &BlkioThrottle,
    dev: &LoopDev,
    mount: &Path,
    signal: &str,
    group: bool,
) -> std::process::Output {
    let dev_s = dev.path.display().to_string();
    let mount_s = mount.display().to_string();
    let mut cmd = throttle.wrap(
        Path::new(env!("CARGO_BIN_EXE_disktier")),
        &["setup", "--devices", &dev_s, "--mount", &mount_s],
    );
    let child = cmd
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Discovery takes well under a second; mkfs.xfs at 5 write IOPS takes many.
    std::thread::sleep(Duration::from_millis(1500));
    let target = if group {
        format!("-{}", child.id())
    } else {
        child.id().to_string()
    };
    let st = Command::new("kill")
        .args([&format!("-{signal}"), "--", &target])
        .status()
        .unwrap();
    assert!(st.success());
    child.wait_with_output().unwrap()
}

#[test]
fn a_signal_during_mkfs_stops_it_erases_the_half_made_filesystem_and_says_how_to_go_on() {
    if !require_loop_xfs() || !BlkioThrottle::require() {
        return;
    }
    let (dev, _scratch, mount, _unmount) = loop_with_mount_point(2 << 30, "data");
    let dev_s = dev.path.display().to_string();
    for (signal, group) in [("INT", true), ("TERM", false)] {
        let throttle = BlkioThrottle::new(&dev.maj_min(), 5, None);
        let out = interrupted_setup(&throttle, &dev, &mount, signal, group);
        drop(throttle);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "SIG{signal}: {err}");
        for want in [
            // Heard at once, before the stopped tool has exited.
            &format!("SIG{signal}: stopping: the tool running is stopped and waited for"),
            "error: interrupted by a signal during step 1 of ",
            &format!("(make xfs labelled disktier on {dev_s})"),
            "its command was stopped and waited for",
            "the disk is blank again",
            "Run the same `disktier setup` command again to finish",
        ] {
            assert!(err.contains(want), "SIG{signal}: lacks {want:?}: {err}");
        }
        // No mkfs left behind, the disk blank, nothing mounted.
        assert_eq!(
            processes_naming(&dev_s),
            Vec::<String>::new(),
            "SIG{signal}"
        );
        assert_eq!(blkid(&dev.path, "TYPE"), "", "SIG{signal}");
        assert!(!is_mount_point(&mount), "SIG{signal}");
    }
    // As the message says: the same command again finishes the job.
    Command::new(env!("CARGO_BIN_EXE_disktier"))
        .args(["setup", "--devices", &dev_s, "--mount"])
        .arg(&mount)
        .stdout_ok();
    assert!(is_mount_point(&mount));
    assert_eq!(blkid(&dev.path, "TYPE"), "xfs");
    Command::new(env!("CARGO_BIN_EXE_disktier"))
        .args(["setup", "--undo", "--wipe", "--mount"])
        .arg(&mount)
        .stdout_ok();
}
