//! io_uring disabled by sysctl: `bench` falls back to psync and says why (issue #2, "Bad input").
//!
//! This flips the machine-wide `kernel.io_uring_disabled` sysctl, so it lives in a test binary of
//! its own (cargo runs test binaries one after another, so no other test sees the change) and
//! restores the value it found even when the assertions fail.

use disktier_testkit::cli::disktier;
use disktier_testkit::cli::json_ok;
use std::path::Path;

const SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";

struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(SYSCTL, &self.0);
    }
}

#[test]
fn bench_falls_back_to_psync_when_io_uring_is_disabled() {
    if !disktier_testkit::require(
        disktier_testkit::is_root() && Path::new(SYSCTL).exists(),
        "root and the kernel.io_uring_disabled sysctl",
    ) {
        return;
    }
    let before = std::fs::read_to_string(SYSCTL).unwrap();
    let _restore = Restore(before.trim().to_string());
    std::fs::write(SYSCTL, "2").unwrap();
    assert_eq!(std::fs::read_to_string(SYSCTL).unwrap().trim(), "2");

    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = disktier()
        .env("DISKTIER_DB", dir.path().join("results.db"))
        .args(["--format", "json", "bench"])
        .arg(dir.path().join("data"))
        .args(["--rw", "randread", "--size", "4m", "--runtime", "1s"])
        .output()
        .unwrap();
    let doc = json_ok(&out);
    assert_eq!(doc["job"]["ioengine"], "psync", "{doc}");
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("io_uring_disabled") && warnings.contains("psync"),
        "no fallback warning naming why: {warnings}"
    );
    assert!(doc["results"]["read"]["ios"].as_u64().unwrap() > 0);
}
