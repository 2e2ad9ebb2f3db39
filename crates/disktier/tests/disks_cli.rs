//! `disktier disks` and `disktier setup` as a user runs them: fixture nodes through the hidden
//! `--sysfs-root`, and real loop devices with `--devices`.

use assert_cmd::Command;
use disktier_testkit::cli::disktier;
use disktier_testkit::cli::sysfs_fixture;
use disktier_testkit::cli::{json_ok, stdout_ok};
use disktier_testkit::{have, loop_with_mount_point, require, require_loop, LoopDev, Unmount};
use predicates::prelude::*;
use std::path::Path;

fn bin() -> Command {
    let mut c = disktier();
    c.env("DISKTIER_DB", "/nonexistent/disktier-test.db")
        .arg("--no-save");
    c
}

fn json(c: &mut Command) -> serde_json::Value {
    let out = c.output().unwrap();
    json_ok(&out)
}

/// What `disks --format json` lists for `dev`.
fn listed(dev: &LoopDev) -> serde_json::Value {
    let v = json(bin().args(["--format", "json", "disks"]));
    v["disks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == dev.name().as_str())
        .cloned()
        .unwrap()
}

#[test]
fn disks_json_classifies_each_cloud_fixture() {
    for (tree, name, class, eligible) in [
        ("aws-m6id-xlarge", "nvme1n1", "instance-store", true),
        ("aws-m6id-xlarge", "nvme0n1", "system", false),
        ("aws-i3-8xlarge", "nvme3n1", "instance-store", true),
        ("gke-local-ssd", "nvme0n1", "local-ssd", false),
        ("gke-local-ssd", "nvme1n1", "system", false),
        ("azure-e4pds-v6", "nvme1n1", "azure-temp-nvme", true),
    ] {
        let v = json(
            bin()
                .args(["--format", "json", "disks", "--sysfs-root"])
                .arg(sysfs_fixture(tree)),
        );
        assert_eq!(v["schema_version"], 1);
        let d = v["disks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == name)
            .unwrap_or_else(|| panic!("{tree}: no {name}"));
        assert_eq!(d["class"], class, "{tree} {name}");
        assert_eq!(d["eligible"], eligible, "{tree} {name}");
    }
}

#[test]
fn disks_table_shows_stable_path_and_reasons() {
    bin()
        .args(["disks", "--sysfs-root"])
        .arg(sysfs_fixture("aws-m6id-xlarge"))
        .assert()
        .success()
        .stdout(predicate::str::contains("instance-store"))
        .stdout(predicate::str::contains(
            "by-id: /dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_AWS1A2B3C4D5E6F70809",
        ))
        .stdout(predicate::str::contains(
            "not eligible: system disk (holds /sysroot, /boot)",
        ));
}

/// Found by QA: `disks` listed a disk that a loop device is backed by, or that a process has
/// open, as eligible (`yes`), though docs/disks.md lists "in use" among the reasons it shows and
/// `setup --devices` then refused that very disk as in use. A listing still opens nothing with
/// `O_EXCL`; what uses the disk is read from /proc and sysfs.
#[test]
fn disks_lists_a_disk_in_use_without_a_claim_as_not_eligible() {
    let Some(dev) = disktier_testkit::loop_dev(16 << 20) else {
        return;
    };
    assert_eq!(listed(&dev)["eligible"], true);
    let out = std::process::Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&dev.path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let upper = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let me = listed(&dev);
    let text = bin().arg("disks").output().unwrap();
    let _ = std::process::Command::new("losetup")
        .args(["-d", &upper])
        .status();
    assert_eq!(me["eligible"], false, "{me}");
    assert_eq!(
        me["ineligible"],
        serde_json::json!([{"reason": "in-use", "by": [format!("loop device {upper} is backed by it")]}])
    );
    let text = stdout_ok(&text);
    assert!(
        text.contains(&format!(
            "not eligible: in use: loop device {upper} is backed by it"
        )),
        "{text}"
    );

    // A process that holds it open (here a sleep with it as stdin).
    let mut user = std::process::Command::new("sleep")
        .arg("60")
        .stdin(std::fs::File::open(&dev.path).unwrap())
        .spawn()
        .unwrap();
    let me = listed(&dev);
    let _ = user.kill();
    let _ = user.wait();
    assert_eq!(me["eligible"], false, "{me}");
    assert!(
        me["ineligible"]
            .to_string()
            .contains(&format!("process {} (sleep) has it open", user.id())),
        "{me}"
    );
    assert_eq!(listed(&dev)["eligible"], true);
}

#[test]
fn setup_dry_run_on_the_i3_fixture_prints_raid0_and_stripe_aware_mkfs() {
    bin()
        .args(["setup", "--mount", "/data", "--dry-run", "--sysfs-root"])
        .arg(sysfs_fixture("aws-i3-8xlarge"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "mdadm --create /dev/md/disktier --name=disktier --homehost=any --level=0 --chunk=256",
        ))
        .stdout(predicate::str::contains("-d su=256k,sw=4 /dev/md/disktier"));
}

#[test]
fn setup_refuses_to_act_on_a_fixture_and_gke_is_nothing_to_do() {
    bin()
        .args(["setup", "--mount", "/data", "--sysfs-root"])
        .arg(sysfs_fixture("aws-i3-8xlarge"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("only --dry-run is allowed"));
    // Nothing set up is exit 1 (QA: exit 0 let `setup && start-workload` go on with the data
    // on the root disk), with the report on stdout all the same.
    let out = bin()
        .args("--format json setup --mount /data --dry-run --sysfs-root".split_whitespace())
        .arg(sysfs_fixture("gke-local-ssd"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("nothing was set up for /data: no eligible disk"),
        "{out:?}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["steps"].as_array().unwrap().len(), 0);
    assert!(v["notes"].to_string().contains("nothing to do"));
}

#[test]
fn setup_notes_show_no_control_character_of_the_node() {
    // Found by QA: a skipped disk's note quoted its mount point (the kernel escapes blanks and
    // newlines in mountinfo, not ESC) as it was, escape sequence and all.
    let tmp = tempfile::tempdir().unwrap();
    let node = tmp.path().join("node");
    let ok = std::process::Command::new("cp")
        .arg("-r")
        .arg(sysfs_fixture("aws-m6id-xlarge"))
        .arg(&node)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let mi = node.join("proc/self/mountinfo");
    let mut text = std::fs::read_to_string(&mi).unwrap();
    text.push_str("60 24 259:1 / /mnt/e\x1b[2Jx rw,relatime shared:30 - xfs /dev/nvme1n1 rw\n");
    std::fs::write(&mi, text).unwrap();
    let out = bin()
        .args(["setup", "--mount", "/data", "--dry-run", "--sysfs-root"])
        .arg(&node)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mounted at /mnt/e\\u{1b}[2Jx"), "{err}");
    assert!(!err.contains('\x1b'), "{err:?}");
}

#[test]
fn setup_on_a_loop_device_then_rerun_changes_nothing() {
    if !require_loop() || !require(have("mkfs.xfs"), "mkfs.xfs") {
        return;
    }
    let (dev, tmp, mnt, _g) = loop_with_mount_point(320 << 20, "data");
    let devs = dev.path.display().to_string();
    // Before: the loop device is listed, class loop, eligible.
    let me = listed(&dev);
    assert_eq!(
        (me["class"].as_str(), me["eligible"].as_bool()),
        (Some("loop"), Some(true))
    );
    // Auto mode never takes a loop device: nothing to set up here (exit 1).
    let out = bin()
        .args(["--format", "json", "setup", "--mount"])
        .arg(&mnt)
        .arg("--dry-run")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v = String::from_utf8_lossy(&out.stdout);
    assert!(v.contains("\"devices\": []") && !v.contains(&devs), "{v}");

    // The same setup twice: the second run has nothing left to do.
    let setup_on_dev = || {
        json(
            bin()
                .args(["--format", "json", "setup", "--mount"])
                .arg(&mnt)
                .args(["--devices", &devs, "--mode", "0755"]),
        )
    };
    let v = setup_on_dev();
    assert_eq!(v["changed"], true);
    assert_eq!(v["layout"], "direct");
    assert!(v["steps"].to_string().contains("mkfs.xfs -K -L disktier"));
    let v = setup_on_dev();
    assert_eq!(v["changed"], false);
    assert_eq!(v["steps"].as_array().unwrap().len(), 0, "{v}");
    bin()
        .args(["setup", "--mount"])
        .arg(&mnt)
        .args(["--devices", &devs])
        .assert()
        .success()
        .stdout(predicate::str::contains("nothing to change"));
    // Now the device is in use: `disks` says so, and another mount point is refused.
    let me = listed(&dev);
    assert_eq!(me["eligible"], false);
    assert_eq!(me["signature"]["label"], "disktier");
    bin()
        .args(["setup", "--mount"])
        .arg(tmp.path().join("other"))
        .args(["--devices", &devs])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "holds disktier's filesystem but is mounted at",
        ));
}

#[test]
fn setup_prjquota_and_missing_devices_are_clear_errors() {
    bin()
        .args([
            "setup",
            "--mount",
            "/data",
            "--devices",
            "/dev/disk/by-id/nope",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "/dev/disk/by-id/nope: no such block device",
        ));
    bin()
        .args(["setup", "--mount", "relative/dir"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not an absolute path"));
    // The quota check comes before any disk is chosen or touched.
    let missing = disktier_disks::setup::kernel::quota_missing(
        Path::new("/"),
        disktier_disks::setup::FsType::Xfs,
    );
    if let Some(why) = missing {
        bin()
            .args(["setup", "--mount", "/var/tmp/disktier-quota-test", "--options", "prjquota", "--dry-run"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "this kernel has no quota support ({why}): prjquota cannot be mounted; drop it or use a kernel with CONFIG_QUOTA/XFS_QUOTA"
            )));
    }
}

#[test]
fn persisted_boot_unit_repeats_the_request_with_arguments_setup_accepts() {
    let out = bin()
        .args([
            "setup",
            "--mount",
            "/var/lib/containers",
            "--options",
            "prjquota",
            "--owner",
            "core:core",
            "--mode",
            "0751",
            "--persist",
            "systemd",
            "--dry-run",
            // The binary under test lives in target/.
            "--allow-build-binary",
            "--sysfs-root",
        ])
        .arg(sysfs_fixture("aws-m6id-xlarge"))
        .output()
        .unwrap();
    let text = stdout_ok(&out);
    assert!(text.contains("cat > /etc/systemd/system/disktier-setup-var-lib-containers.service"));
    let exec = text
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart line");
    let words: Vec<&str> = exec.split(' ').collect();
    assert!(words[0].ends_with("disktier"), "{exec}");
    assert_eq!(
        words[1..].join(" "),
        "setup --mount /var/lib/containers --layout auto --fs xfs --label disktier --options prjquota --owner core:core --mode 0751 --persist none"
    );
    // The same arguments parse and plan the same filesystem.
    let again = bin()
        .args(&words[1..])
        .args(["--dry-run", "--sysfs-root"])
        .arg(sysfs_fixture("aws-m6id-xlarge"))
        .output()
        .unwrap();
    let again = stdout_ok(&again);
    let mkfs = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("mkfs.xfs"))
            .map(str::to_string)
    };
    assert_eq!(mkfs(&again), mkfs(&text));
}

/// Runs `setup ARGS --dry-run`: it must end with exit 2 and one line on stderr naming every
/// one of `needles`.
fn setup_refused(case: &str, args: &[&str], needles: &[&str]) {
    let out = bin()
        .arg("setup")
        .args(args)
        .arg("--dry-run")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{case}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{case}: one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{case}: lacks {n:?}: {err}");
    }
    assert!(out.stdout.is_empty(), "{case}: printed a plan");
}

#[test]
fn setup_refuses_what_qa_found_before_planning_anything() {
    let fixture = sysfs_fixture("aws-m6id-xlarge");
    let root = fixture.to_str().unwrap();
    let at = |extra: &[&'static str]| {
        let mut a = vec!["--mount", "/data", "--sysfs-root", root];
        a.extend(extra);
        a
    };
    for (case, args, needles) in [
        (
            "one device twice",
            at(&["--devices", "/dev/nvme1n1,/dev/nvme1n1"]),
            &["--devices /dev/nvme1n1 is given twice: name each disk once"][..],
        ),
        (
            "one bind twice",
            at(&["--bind", "/var/lib/x,/var/lib/x"]),
            &["--bind /var/lib/x is given twice"],
        ),
        (
            "uid -1",
            at(&["--owner", "4294967295:0"]),
            &["--owner", "at most 4294967294"],
        ),
        (
            "a quota option in capitals",
            at(&["--options", "PRJQUOTA"]),
            &["case-sensitive: write prjquota"],
        ),
        (
            "read-only with an owner",
            at(&["--options", "ro", "--owner", "0:0"]),
            &["--options ro", "--owner must write to it", "drop ro"],
        ),
        (
            "a mount point in /proc",
            vec!["--mount", "/proc/x", "--sysfs-root", root],
            &["--mount /proc/x lies in /proc, a kernel filesystem"],
        ),
    ] {
        setup_refused(case, &args, needles);
    }
}

#[test]
fn setup_refuses_to_mount_over_a_directory_that_holds_something() {
    // Found by QA: `--dry-run --mount /etc` (and /usr, /boot, /var) planned a mount over it.
    if !require_loop() {
        return;
    }
    let dev = LoopDev::new(16 << 20);
    let devs = dev.path.display().to_string();
    for dir in ["/etc", "/usr", "/var"] {
        setup_refused(
            dir,
            &["--mount", dir, "--devices", &devs],
            &[&format!("{dir} is not empty"), "--allow-nonempty"],
        );
    }
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    std::fs::write(tmp.path().join("keep"), b"x").unwrap();
    let out = bin()
        .args([
            "setup",
            "--dry-run",
            "--allow-nonempty",
            "--devices",
            &devs,
            "--mount",
        ])
        .arg(tmp.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("hidden under the mount until it is unmounted"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("mount -t xfs"));
    // --layout raid0 with one disk says it is used directly.
    let out = bin()
        .args([
            "setup",
            "--dry-run",
            "--layout",
            "raid0",
            "--devices",
            &devs,
            "--mount",
        ])
        .arg(tmp.path().join("new"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("--layout raid0 with one disk"), "{err}");
}

#[test]
fn undo_of_a_separate_layouts_parent_exits_2_and_undoes_nothing() {
    // Found by QA: it printed "setup undone" (exit 0) and left DIR/0, DIR/1 mounted and persisted.
    if !require_loop() || !require(have("mkfs.xfs") && have("wipefs"), "mkfs.xfs and wipefs") {
        return;
    }
    let (a, b) = (LoopDev::new(320 << 20), LoopDev::new(320 << 20));
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let dir = tmp.path().join("disks");
    let (zero, one) = (dir.join("0"), dir.join("1"));
    let _g = Unmount(vec![zero.clone(), one.clone()]);
    let root = tmp.path().join("root");
    let devs = format!("{},{}", a.path.display(), b.path.display());
    bin()
        .args([
            "setup",
            "--layout",
            "separate",
            "--persist",
            "fstab",
            "--devices",
            &devs,
        ])
        .arg("--mount")
        .arg(&dir)
        .arg("--root")
        .arg(&root)
        .assert()
        .success()
        .stdout(predicate::str::contains("(xfs)"));
    let fstab = std::fs::read_to_string(root.join("etc/fstab")).unwrap();
    for dry in [true, false] {
        let mut c = bin();
        c.args(["setup", "--undo", "--mount"])
            .arg(&dir)
            .arg("--root")
            .arg(&root);
        if dry {
            c.arg("--dry-run");
        }
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        for m in [&zero, &one] {
            assert!(
                err.contains(&format!("disktier setup --undo --mount {}", m.display())),
                "{err}"
            );
        }
        assert!(err.contains("nothing was undone"), "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(root.join("etc/fstab")).unwrap(),
        fstab
    );
    for m in [&zero, &one] {
        bin()
            .args(["setup", "--undo", "--wipe", "--mount"])
            .arg(m)
            .arg("--root")
            .arg(&root)
            .assert()
            .success()
            .stdout(predicate::str::contains("setup undone"));
    }
    bin()
        .args(["setup", "--undo", "--mount"])
        .arg(&dir)
        .arg("--root")
        .arg(&root)
        .assert()
        .success()
        .stdout(predicate::str::contains("nothing to undo"));
}
