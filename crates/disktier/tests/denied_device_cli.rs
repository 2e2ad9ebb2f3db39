//! QA (session 29): a block device that a device cgroup denies (a container's, as on this CI
//! VM's /dev/vda) was refused to root with "no permission: run as a user that may read it (e.g.
//! with sudo)": no user would do. Root is told what refuses it and what to do.

use disktier_testkit::{is_root, loop_dev, require};
use std::path::PathBuf;

/// A devices cgroup (v1) denying one device; its processes are moved out and it is removed on
/// drop, even when the test fails.
struct DeviceDeny {
    dir: PathBuf,
}

impl DeviceDeny {
    fn new(maj_min: &str) -> DeviceDeny {
        let dir = PathBuf::from(format!(
            "/sys/fs/cgroup/devices/disktier-test-deny-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("create devices cgroup");
        std::fs::write(dir.join("devices.deny"), format!("b {maj_min} rwm")).unwrap();
        DeviceDeny { dir }
    }
}

impl Drop for DeviceDeny {
    fn drop(&mut self) {
        if let Ok(p) = std::fs::read_to_string(self.dir.join("cgroup.procs")) {
            for pid in p.lines() {
                let _ = std::fs::write("/sys/fs/cgroup/devices/cgroup.procs", pid);
            }
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn root_denied_a_device_by_a_cgroup_is_not_told_to_use_sudo() {
    let available = std::path::Path::new("/sys/fs/cgroup/devices/devices.deny").exists();
    if !require(is_root() && available, "root and cgroup v1 devices") {
        return;
    }
    let Some(dev) = loop_dev(16 << 20) else {
        return;
    };
    let deny = DeviceDeny::new(&dev.maj_min());
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec \"$0\" \"$@\"",
            deny.dir.display()
        ))
        .arg(env!("CARGO_BIN_EXE_disktier"))
        .args(["--no-save", "bench"])
        .arg(&dev.path)
        .args(["--rw", "read", "--size", "1M"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "no permission to read it, although disktier runs as root: a container's device cgroup"
        ) && !err.contains("sudo"),
        "{err}"
    );
}
