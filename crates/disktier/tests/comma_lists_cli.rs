//! QA (session 27): a comma-separated flag with an empty item dropped it without a word:
//! `interfere --mitigations none,,ionice-idle` ran the two it could read, `simulate
//! --cache-sizes 1GiB,,4GiB --policies lru,,arc`, `render --bind /var/a,,/var/b` and `setup
//! --options prjquota,,discard` the same, so a name lost between two commas (an empty shell
//! variable, `--bind $A,$B`) went unnoticed. Each refuses it now (exit 2), naming the item; a
//! value that is blank as a whole still means none.

use disktier_testkit::cli::{disktier, sysfs_fixture};
use std::time::Duration;

/// Runs disktier with `args`: exit 2 and an `error:` line holding `expect`, nothing on stdout.
fn refused(args: &[&str], expect: &str) {
    let t = tempfile::tempdir().unwrap();
    let out = disktier()
        .env("DISKTIER_DB", t.path().join("db"))
        .env("DISKTIER_RUN_DIR", t.path().join("run"))
        .arg("--no-save")
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(expect),
        "{args:?}: want {expect:?}: {stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        !t.path().join("run").exists(),
        "{args:?}: a journal was made"
    );
}

#[test]
fn an_empty_item_of_a_comma_separated_flag_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().to_str().unwrap();
    let empty = |flag: &str, list: &str, n: u32| {
        format!("{flag} \"{list}\": item {n} is empty (two commas in a row, or a comma at the start or end)")
    };
    let mitigations = ["interfere", dir, "--duration", "1s", "--mitigations"];
    for list in ["none,,ionice-idle", "none,"] {
        refused(
            &[&mitigations[..], &[list]].concat(),
            &empty("--mitigations", list, 2),
        );
    }
    let simulate = ["simulate", "--trace", "/nonexistent/t.dtt"];
    refused(
        &[&simulate[..], &["--cache-sizes", "1GiB,,4GiB"]].concat(),
        &empty("--cache-sizes", "1GiB,,4GiB", 2),
    );
    refused(
        &[
            &simulate[..],
            &["--cache-sizes", "1GiB", "--policies", ",lru"],
        ]
        .concat(),
        &empty("--policies", ",lru", 1),
    );
    let not_usable = |flag: &str, list: &str, n: u32| {
        format!("{flag} \"{list}\" is not usable: item {n} is empty (two commas in a row")
    };
    let render = ["render", "systemd", "--mount", "/data"];
    refused(
        &[&render[..], &["--bind", "/var/a,,/var/b"]].concat(),
        &not_usable("--bind", "/var/a,,/var/b", 2),
    );
    refused(
        &[&render[..], &["--options", "prjquota,"]].concat(),
        &not_usable("--options", "prjquota,", 2),
    );
    let root = sysfs_fixture("aws-m6id-xlarge");
    refused(
        &[
            "setup",
            "--mount",
            "/mnt/p27",
            "--options",
            "prjquota,,discard",
            "--dry-run",
            "--sysfs-root",
            root.to_str().unwrap(),
        ],
        &not_usable("--options", "prjquota,,discard", 2),
    );
    // A blank value as a whole is no option at all, as before.
    let out = disktier()
        .args(["render", "systemd", "--mount", "/data", "--options", ""])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Options=defaults,noatime\n"));
}
