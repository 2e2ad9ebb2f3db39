//! QA: `disktier setup` and its mkfs.xfs killed together (SIGKILL to the group, as an OOM kill
//! or a power cut ends them) left an xfs whose superblock mkfs never finished: blkid reports it
//! with setup's label and UUID, every re-run planned a mount of it, and the kernel refused it
//! ("Structure needs cleaning") with a message that said to re-run setup, which failed again.
//! Now the failed mount reads the superblock and says what it is and how to go on; doing that
//! (wipefs, then the same setup) finishes the job. On a real loop device, its writes throttled
//! (cgroup v1 blkio) so that the kill lands while mkfs runs.

use disktier_testkit::cli::Succeeds;
use disktier_testkit::{
    blkid, is_mount_point, loop_with_mount_point, require_loop_xfs, BlkioThrottle,
};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn setup(dev: &str, mount: &Path, root: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_disktier"));
    c.args(["setup", "--devices", dev, "--mount"])
        .arg(mount)
        .arg("--root")
        .arg(root);
    c
}

#[test]
fn a_setup_killed_during_mkfs_is_named_on_the_next_run_and_the_advice_finishes_it() {
    if !require_loop_xfs() || !BlkioThrottle::require() {
        return;
    }
    let (dev, scratch, mount, _unmount) = loop_with_mount_point(2 << 30, "data");
    // A root of its own: its lock is not the one other tests' setups take.
    let root = scratch.path().join("root");
    let dev_s = dev.path.display().to_string();

    let throttle = BlkioThrottle::new(&dev.maj_min(), 5, None);
    let s = setup(&dev_s, &mount, &root);
    let args: Vec<String> = std::iter::once(s.get_program())
        .chain(s.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let argv: Vec<&str> = args[1..].iter().map(String::as_str).collect();
    let child = throttle
        .wrap(Path::new(&args[0]), &argv)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Discovery takes well under a second; mkfs.xfs at 5 write IOPS takes many.
    std::thread::sleep(Duration::from_millis(1500));
    let st = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status()
        .unwrap();
    assert!(st.success());
    let mut child = child;
    child.wait().unwrap();
    // mkfs runs in a process group of its own: it is killed too (found by its command line,
    // which names our loop device), as an OOM kill or a power cut would end it.
    let mkfs = mkfs_on(&dev_s);
    assert!(!mkfs.is_empty(), "mkfs.xfs was not running on {dev_s}");
    for pid in mkfs {
        let _ = Command::new("kill").args(["-KILL", &pid]).status();
    }
    std::thread::sleep(Duration::from_millis(300));
    drop(throttle);
    assert_eq!(
        blkid(&dev.path, "TYPE"),
        "xfs",
        "mkfs wrote no superblock yet"
    );

    let out = setup(&dev_s, &mount, &root).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for want in [
        "that was never finished",
        "marked in progress",
        &format!("wipefs -a {dev_s}"),
    ] {
        assert!(err.contains(want), "lacks {want:?}: {err}");
    }
    assert!(!is_mount_point(&mount));

    // As the message says.
    Command::new("wipefs").args(["-a", &dev_s]).stdout_ok();
    setup(&dev_s, &mount, &root).stdout_ok();
    assert!(is_mount_point(&mount));
    assert_eq!(blkid(&dev.path, "TYPE"), "xfs");
    Command::new(env!("CARGO_BIN_EXE_disktier"))
        .args(["setup", "--undo", "--wipe", "--mount"])
        .arg(&mount)
        .arg("--root")
        .arg(&root)
        .stdout_ok();
}

/// The pids of running mkfs.xfs processes whose last argument is `dev`.
fn mkfs_on(dev: &str) -> Vec<String> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmd.split(|b| *b == 0).filter(|a| !a.is_empty()).collect();
        let is_mkfs = args.first().is_some_and(|a| a.ends_with(b"mkfs.xfs"));
        if is_mkfs && args.last() == Some(&dev.as_bytes()) {
            pids.push(name);
        }
    }
    pids
}
