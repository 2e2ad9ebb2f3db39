//! `setup --undo` on real loop devices: setup then undo restores the mount table, the fstab file
//! and the unit directory (temp paths); undo twice is a no-op; an undo killed midway is completed
//! by the next run (its journal); --wipe leaves the device blank; a mount setup did not make is
//! refused; binds need an explicit choice.

use disktier_cmd::{Cmd, CmdError, CommandRunner, Output, RealRunner};
use disktier_disks::setup::undo::{journal_path, undo, BindChoice, UndoRequest};
use disktier_disks::setup::{setup, Persist};
use disktier_testkit::{blkid, is_mount_point, mount_points_under, LoopDev, Unmount};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

mod support;
use support::{killed_at, mp, request_on, xfs_loop};

/// Files below `dir` (relative paths), sorted: the state of a unit directory.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out.sort();
    out
}

struct Node {
    dev: LoopDev,
    tmp: tempfile::TempDir,
    mnt: PathBuf,
    app: PathBuf,
    root: PathBuf,
    _guard: Unmount,
}

/// A loop device set up by `setup` with one bind and the given persistence, with an fstab that
/// already has a line of someone else's and a unit dir with someone else's unit; `None` (the
/// test is skipped) where loop devices or mkfs.xfs are missing.
fn set_up(persist: Persist) -> Option<(Node, Vec<String>, String, Vec<String>)> {
    let (dev, tmp) = xfs_loop()?;
    let mnt = tmp.path().join("m");
    let app = tmp.path().join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("before"), b"on the root disk").unwrap();
    let root = tmp.path().join("root");
    let units = root.join("etc/systemd/system");
    std::fs::create_dir_all(&units).unwrap();
    std::fs::write(
        units.join("other.mount"),
        "[Mount]\nWhat=/dev/x\nWhere=/srv\n",
    )
    .unwrap();
    let fstab = "UUID=theirs /srv xfs defaults 0 0\n".to_string();
    std::fs::write(root.join("etc/fstab"), &fstab).unwrap();
    let guard = Unmount(vec![mnt.clone(), app.clone()]);
    let mounts_before = mount_points_under(tmp.path());
    let units_before = tree(&units);

    let mut c = request_on(&dev, &mnt);
    c.bind = vec![app.clone()];
    c.persist = persist;
    c.persist_root = root.clone();
    setup(&c.check().unwrap(), Path::new("/"), &RealRunner).unwrap();
    assert!(is_mount_point(&mnt) && is_mount_point(&app));
    Some((
        Node {
            dev,
            tmp,
            mnt,
            app,
            root,
            _guard: guard,
        },
        mounts_before,
        fstab,
        units_before,
    ))
}

fn request(n: &Node) -> UndoRequest {
    let mut r = UndoRequest::new(mp(&n.mnt));
    r.persist_root = n.root.clone();
    // Units under a temp root are not the node's: its systemd is not reloaded.
    r.reload_systemd = false;
    r
}

#[test]
fn setup_then_undo_restores_the_state_and_undo_twice_is_a_no_op() {
    for persist in [Persist::Systemd, Persist::Fstab] {
        let Some((n, mounts_before, fstab_before, units_before)) = set_up(persist) else {
            return;
        };
        // Written through the bind after setup: lives on the local disk.
        std::fs::write(n.app.join("after"), b"written on the local disk").unwrap();

        // Binds exist: the choice is required.
        let e = undo(&request(&n), &RealRunner).unwrap_err().to_string();
        assert!(
            e.contains("--binds copy-back") && e.contains("--binds keep"),
            "{e}"
        );
        assert!(is_mount_point(&n.mnt), "refused before any change");

        // --dry-run prints the steps and changes nothing.
        let mut r = request(&n);
        r.binds = Some(BindChoice::CopyBack);
        r.dry_run = true;
        let rep = undo(&r, &RealRunner).unwrap();
        assert!(rep
            .steps
            .iter()
            .any(|s| s.commands.iter().any(|c| c.starts_with("umount"))));
        assert!(is_mount_point(&n.mnt) && is_mount_point(&n.app));

        r.dry_run = false;
        let rep = undo(&r, &RealRunner).unwrap();
        assert!(rep.changed, "{rep:#?}");
        assert_eq!(mount_points_under(n.tmp.path()), mounts_before);
        assert_eq!(
            std::fs::read_to_string(n.root.join("etc/fstab")).unwrap(),
            fstab_before
        );
        let units = n.root.join("etc/systemd/system");
        assert_eq!(tree(&units), units_before, "{persist:?}");
        // Copied back: what was written through the bind is now on the root disk.
        assert_eq!(
            std::fs::read(n.app.join("after")).unwrap(),
            b"written on the local disk"
        );
        assert_eq!(
            std::fs::read(n.app.join("before")).unwrap(),
            b"on the root disk"
        );
        assert!(!journal_path(&n.root, &mp(&n.mnt)).exists());
        // Not wiped without --wipe.
        assert_eq!(blkid(&n.dev.path, "TYPE"), "xfs");

        let again = undo(&r, &RealRunner).unwrap();
        assert!(!again.changed && again.steps.is_empty(), "{again:#?}");
    }
}

#[test]
fn keep_leaves_the_directories_underneath_as_they_were() {
    let Some((n, _, _, _)) = set_up(Persist::None) else {
        return;
    };
    std::fs::write(n.app.join("after"), b"x").unwrap();
    let mut r = request(&n);
    r.binds = Some(BindChoice::Keep);
    undo(&r, &RealRunner).unwrap();
    assert!(!is_mount_point(&n.app) && !is_mount_point(&n.mnt));
    assert!(!n.app.join("after").exists());
    assert!(n.app.join("before").exists());
}

/// Fails the unmount of `target` once: a run killed at that step.
fn fail_umount(target: String) -> impl CommandRunner {
    let umount = format!("umount {target}");
    let answer = Err(CmdError::Failed {
        cmd: umount.clone(),
        status: 137,
        stdout: String::new(),
        stderr: "killed".into(),
    });
    killed_at(move |cmd| cmd.to_string() == umount, answer)
}

#[test]
fn an_undo_killed_midway_is_completed_by_the_next_run_and_wipe_blanks_the_device() {
    let Some((n, mounts_before, fstab_before, _)) = set_up(Persist::Fstab) else {
        return;
    };
    let mut r = request(&n);
    r.binds = Some(BindChoice::CopyBack);
    r.wipe = true;
    // Killed after the bind is unmounted, before the filesystem is.
    let runner = fail_umount(n.mnt.display().to_string());
    assert!(undo(&r, &runner).is_err());
    assert!(!is_mount_point(&n.app) && is_mount_point(&n.mnt));
    let journal = journal_path(&n.root, &mp(&n.mnt));
    assert!(journal.exists(), "the journal survives the kill");
    // The re-run knows the bind and the device from the journal, not from the mount table.
    let rep = undo(&r, &RealRunner).unwrap();
    assert!(rep.resumed && rep.changed, "{rep:#?}");
    assert_eq!(mount_points_under(n.tmp.path()), mounts_before);
    assert_eq!(
        std::fs::read_to_string(n.root.join("etc/fstab")).unwrap(),
        fstab_before
    );
    assert!(!journal.exists());
    assert_eq!(blkid(&n.dev.path, "TYPE"), "", "wiped");
    let o = Command::new("blkid")
        .arg("-p")
        .arg(&n.dev.path)
        .output()
        .unwrap();
    assert!(
        o.stdout.is_empty(),
        "blkid finds nothing: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn a_mount_setup_did_not_make_is_refused() {
    let Some((dev, tmp)) = xfs_loop() else {
        return;
    };
    let mnt = tmp.path().join("m");
    std::fs::create_dir_all(&mnt).unwrap();
    let _guard = Unmount(vec![mnt.clone()]);
    assert!(Command::new("mkfs.xfs")
        .args(["-q", "-L", "disktier"])
        .arg(&dev.path)
        .status()
        .unwrap()
        .success());
    assert!(Command::new("mount")
        .arg(&dev.path)
        .arg(&mnt)
        .status()
        .unwrap()
        .success());
    let mut r = UndoRequest::new(mp(&mnt));
    r.reload_systemd = false;
    r.persist_root = tmp.path().join("root");
    r.wipe = true;
    let e = undo(&r, &RealRunner).unwrap_err().to_string();
    assert!(e.contains("did not make"), "{e}");
    assert!(is_mount_point(&mnt));
    assert_eq!(blkid(&dev.path, "TYPE"), "xfs");
}

/// Mounts a tmpfs at `at` (a directory it makes).
fn mount_tmpfs(at: &Path) {
    std::fs::create_dir_all(at).unwrap();
    assert!(Command::new("mount")
        .args(["-t", "tmpfs", "x"])
        .arg(at)
        .status()
        .unwrap()
        .success());
}

/// The undo is refused with `want` at the start of its message, before any change: the mounts
/// are where they were, no journal is written, fstab is as it was.
fn refused_before_any_change(n: &Node, r: &UndoRequest, want: &str) {
    let fstab = std::fs::read_to_string(n.root.join("etc/fstab")).ok();
    for dry_run in [true, false] {
        let mut r = r.clone();
        r.dry_run = dry_run;
        let e = undo(&r, &RealRunner).unwrap_err().to_string();
        assert!(e.starts_with(want), "dry run {dry_run}: {e}");
        assert!(e.contains("nothing was changed"), "{e}");
    }
    assert!(is_mount_point(&n.mnt) && is_mount_point(&n.app));
    assert!(!journal_path(&n.root, &mp(&n.mnt)).exists());
    assert_eq!(
        std::fs::read_to_string(n.root.join("etc/fstab")).ok(),
        fstab
    );
    assert_eq!(blkid(&n.dev.path, "TYPE"), "xfs");
}

#[test]
fn a_mount_below_the_mount_point_or_a_bind_is_refused_before_any_change() {
    // Found by QA: with a tmpfs on M/sub, `--undo --binds keep` unmounted the binds, then failed
    // on `umount M` with a bare "target is busy" (exit 2).
    let Some((n, mounts_before, _, _)) = set_up(Persist::Fstab) else {
        return;
    };
    let mut r = request(&n);
    r.binds = Some(BindChoice::Keep);
    let sub = n.mnt.join("sub");
    let _sub = Unmount(vec![sub.clone()]);
    mount_tmpfs(&sub);
    refused_before_any_change(
        &n,
        &r,
        &format!(
            "{} cannot be undone while mounts setup did not make are on or below it or its binds: {} (tmpfs from x); nothing was changed; unmount them first (umount {}), then run the undo again",
            n.mnt.display(),
            sub.display(),
            sub.display()
        ),
    );
    drop(_sub);
    // Below a bind (where the root is a shared mount, the kernel propagates it below the
    // filesystem's copy too, and both are named).
    let sub = n.app.join("deep/sub");
    let _sub = Unmount(vec![sub.clone()]);
    mount_tmpfs(&sub);
    refused_before_any_change(
        &n,
        &r,
        &format!(
            "{} cannot be undone while mounts setup did not make are on or below it or its binds: ",
            n.mnt.display()
        ),
    );
    let e = undo(&r, &RealRunner).unwrap_err().to_string();
    assert!(
        e.contains(&format!("{} (tmpfs from x)", sub.display()))
            && e.contains(&format!("umount {}", sub.display())),
        "{e}"
    );
    drop(_sub);
    // Unmounted as told, the undo goes through.
    let rep = undo(&r, &RealRunner).unwrap_or_else(|e| panic!("{e}"));
    assert!(rep.changed, "{rep:#?}");
    assert_eq!(mount_points_under(n.tmp.path()), mounts_before);
}

#[test]
fn wipe_is_refused_before_any_change_while_the_device_is_mounted_elsewhere() {
    // Found by QA: `--undo --wipe` with the device also mounted elsewhere unmounted M, then
    // refused the wipe.
    let Some((n, mounts_before, _, _)) = set_up(Persist::Fstab) else {
        return;
    };
    let other = n.tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let _other = Unmount(vec![other.clone()]);
    assert!(Command::new("mount")
        .arg(&n.dev.path)
        .arg(&other)
        .status()
        .unwrap()
        .success());
    let mut r = request(&n);
    r.binds = Some(BindChoice::Keep);
    r.wipe = true;
    refused_before_any_change(
        &n,
        &r,
        &format!(
            "{dev}, the device setup made for {}, is also mounted at {} (xfs from {dev}), and --wipe would erase the filesystem from under it; nothing was changed; unmount it there first (umount {}), or undo without --wipe",
            n.mnt.display(),
            other.display(),
            other.display(),
            dev = n.dev.path.display(),
        ),
    );
    // Without --wipe the other mount is no obstacle; with it unmounted, --wipe goes through.
    assert!(Command::new("umount")
        .arg(&other)
        .status()
        .unwrap()
        .success());
    let rep = undo(&r, &RealRunner).unwrap_or_else(|e| panic!("{e}"));
    assert!(rep.changed, "{rep:#?}");
    assert_eq!(mount_points_under(n.tmp.path()), mounts_before);
    assert_eq!(blkid(&n.dev.path, "TYPE"), "", "wiped");
}

#[test]
fn a_step_that_fails_part_way_says_what_was_done_and_that_a_rerun_completes_it() {
    // Found by QA: a failed step ended the undo with its bare error, not saying that the binds
    // were already unmounted, that the journal was kept, or that a re-run completes it.
    let Some((n, mounts_before, _, _)) = set_up(Persist::Fstab) else {
        return;
    };
    let mut r = request(&n);
    r.binds = Some(BindChoice::Keep);
    let umount = format!("umount {}", n.mnt.display());
    let busy = Err(CmdError::Failed {
        cmd: umount.clone(),
        status: 32,
        stdout: String::new(),
        stderr: format!("umount: {}: target is busy.", n.mnt.display()),
    });
    let runner = killed_at(move |cmd| cmd.to_string() == umount, busy);
    let e = undo(&r, &runner).unwrap_err();
    let journal = journal_path(&n.root, &mp(&n.mnt));
    assert_eq!(
        e.to_string(),
        format!(
            "the undo of {m} failed part-way: done: unmount the bind on {}. Its journal {} is kept: fix the cause (below), then run `disktier setup --undo --mount {m}` again to complete it",
            n.app.display(),
            journal.display(),
            m = n.mnt.display(),
        )
    );
    let cause = std::error::Error::source(&e)
        .expect("the failed step's error")
        .to_string();
    assert!(cause.contains("target is busy"), "{cause}");
    assert!(journal.exists() && !is_mount_point(&n.app) && is_mount_point(&n.mnt));
    // As it says: the re-run completes it from the journal.
    let rep = undo(&request(&n), &RealRunner).unwrap_or_else(|e| panic!("{e}"));
    assert!(rep.resumed && rep.changed, "{rep:#?}");
    assert_eq!(mount_points_under(n.tmp.path()), mounts_before);
    assert!(!journal.exists());
}

/// Runs every command for real except `systemctl`, which it records and answers with success
/// (the node's systemd is not this test's to reload).
#[derive(Default)]
struct SystemctlRecorded(Mutex<Vec<String>>);

impl CommandRunner for SystemctlRecorded {
    fn output(&self, cmd: &Cmd) -> Result<Output, CmdError> {
        if cmd.to_string().starts_with("systemctl ") {
            self.0.lock().unwrap().push(cmd.to_string());
            return Ok(Output {
                status: 0,
                stdout: String::new(),
                stderr: String::new(),
            });
        }
        RealRunner.output(cmd)
    }
    fn has_program(&self, p: &str) -> bool {
        RealRunner.has_program(p)
    }
}

/// QA: the undo removed setup's units (and fstab lines) but left systemd holding them until
/// the next reload or boot; where systemd runs, it now reloads once they are gone, and a dry
/// run lists that step. Without units or lines to remove (a re-run) nothing is reloaded.
#[test]
fn the_undo_reloads_systemd_after_removing_units_or_fstab_lines() {
    for persist in [Persist::Systemd, Persist::Fstab] {
        let Some((n, _, _, _)) = set_up(persist) else {
            return;
        };
        let mut r = request(&n);
        r.binds = Some(BindChoice::Keep);
        r.reload_systemd = true;
        r.dry_run = true;
        let plan = undo(&r, &RealRunner).unwrap();
        let last = plan.steps.last().unwrap();
        assert_eq!(last.commands, ["systemctl daemon-reload"], "{plan:#?}");

        r.dry_run = false;
        let runner = SystemctlRecorded::default();
        let rep = undo(&r, &runner).unwrap();
        assert_eq!(
            *runner.0.lock().unwrap(),
            ["systemctl daemon-reload"],
            "{persist:?}"
        );
        let at = rep
            .steps
            .iter()
            .position(|s| s.commands == ["systemctl daemon-reload"])
            .unwrap_or_else(|| panic!("{rep:#?}"));
        assert!(
            rep.steps[..at]
                .iter()
                .any(|s| s.description.starts_with("remove")),
            "reloaded after the removal: {rep:#?}"
        );
        assert!(!is_mount_point(&n.mnt));

        let runner = SystemctlRecorded::default();
        let again = undo(&r, &runner).unwrap();
        assert!(!again.changed, "{again:#?}");
        assert!(runner.0.lock().unwrap().is_empty());
    }
}
