//! `disktier setup --undo` at the command line: flags only valid with --undo, --dry-run and
//! --format json on a mount point setup never touched (nothing to undo, nothing changed). The
//! undo itself runs on real loop devices in crates/disks/tests/undo_loop.rs.

use assert_cmd::Command;
use disktier_testkit::cli::Succeeds;

fn disktier() -> Command {
    let mut c = disktier_testkit::cli::disktier();
    c.env("DISKTIER_DB", "/nonexistent/disktier-test.db");
    c
}

#[test]
fn wipe_and_binds_need_undo_and_undo_excludes_setup_flags() {
    for extra in [vec!["--wipe"], vec!["--binds", "keep"]] {
        disktier()
            .args(["setup", "--mount", "/data", "--dry-run"])
            .args(&extra)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("--undo"));
    }
    // Found by QA: --fs, --layout and --allow-build-binary were taken with --undo and ignored.
    for flags in [
        "--persist fstab",
        "--fs ext4",
        "--layout separate",
        "--allow-build-binary",
    ] {
        disktier()
            .args("setup --undo --mount /data --dry-run".split_whitespace())
            .args(flags.split_whitespace())
            .assert()
            .code(2)
            .stderr(predicates::str::contains("cannot be used with"));
    }
}

#[test]
fn wipe_and_binds_are_refused_without_undo_beside_a_setup_flag() {
    // Found by QA: with a flag that conflicts with --undo (--devices), clap skipped --wipe's
    // `requires`, and `setup --devices D --mount M --wipe --dry-run` planned a setup.
    for (setup_flag, extra, said) in [
        (
            vec!["--devices", "/dev/loop0"],
            vec!["--wipe"],
            "--wipe only goes with --undo (it says",
        ),
        (
            vec!["--options", "prjquota"],
            vec!["--binds", "keep"],
            "--binds only goes with --undo (it says",
        ),
        (
            vec!["--persist", "fstab"],
            vec!["--wipe", "--binds", "copy-back"],
            "--wipe and --binds only go with --undo (they say",
        ),
    ] {
        let named = said.split(" only").next().unwrap();
        disktier()
            .args(["setup", "--mount", "/data", "--dry-run"])
            .args(&setup_flag)
            .args(&extra)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicates::str::contains(format!(
                "{said} how the setup at --mount is reversed): add --undo to reverse it, or drop {named} to set up"
            )));
    }
}

#[test]
fn dry_run_json_on_an_untouched_mount_point_lists_no_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("never-set-up");
    let v: serde_json::Value = disktier()
        .args("setup --undo --dry-run --format json --mount".split_whitespace())
        .arg(&mnt)
        .arg("--root")
        .arg(tmp.path().join("root"))
        .json_ok();
    // Versioned as every other --format json document (QA: undo's alone had no version).
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["mount"], mnt.display().to_string());
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["changed"], false);
    assert_eq!(v["steps"].as_array().unwrap().len(), 0);
    assert!(
        !tmp.path().join("root").exists(),
        "a dry run writes nothing"
    );
}
