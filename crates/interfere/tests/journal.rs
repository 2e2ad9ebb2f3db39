//! The interfere journal against an attacker who can plant files: a run directory that is a
//! symlink, someone else's or world-writable; a lock or journal that is a symlink; a journal
//! whose entries ask for anything disktier itself would not restore. Each is refused, and
//! nothing in a refused journal is replayed.

use disktier_interfere::journal::{self, Change, Journal, DIR_PREFIX};
use disktier_interfere::InterfereError;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn private(t: &Path) -> PathBuf {
    let d = t.join("run");
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
    d
}

fn is_root() -> bool {
    disktier_testkit::is_root()
}

fn plant(run: &Path, entries: serde_json::Value) {
    let doc = serde_json::json!({"schema_version": 1, "owner_pid": 1, "entries": entries});
    std::fs::write(run.join("interfere.journal"), doc.to_string()).unwrap();
}

#[test]
fn a_run_dir_that_is_a_symlink_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let elsewhere = private(t.path());
    let link = t.path().join("link");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let e = Journal::open(&link).err().unwrap();
    assert!(
        matches!(e, InterfereError::UnsafeRunDir { .. }),
        "{e}: {e:?}"
    );
    assert!(e.to_string().contains("symlink"), "{e}");
    assert!(std::fs::read_dir(&elsewhere).unwrap().next().is_none());
    assert!(journal::restore(&link).is_err());
}

#[test]
fn a_world_writable_or_foreign_run_dir_is_refused_and_ours_is_narrowed() {
    let t = tempfile::tempdir().unwrap();
    let open_dir = t.path().join("open");
    std::fs::create_dir(&open_dir).unwrap();
    std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = Journal::open(&open_dir).err().unwrap();
    assert!(e.to_string().contains("777"), "{e}");

    let readable = t.path().join("readable");
    std::fs::create_dir(&readable).unwrap();
    std::fs::set_permissions(&readable, std::fs::Permissions::from_mode(0o755)).unwrap();
    drop(Journal::open(&readable).unwrap());
    let mode = std::fs::metadata(&readable).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);

    // A fresh one is created 0700.
    let fresh = t.path().join("a/b/fresh");
    drop(Journal::open(&fresh).unwrap());
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);

    if is_root() {
        let foreign = t.path().join("foreign");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
        let e = Journal::open(&foreign).err().unwrap();
        assert!(e.to_string().contains("uid 65534"), "{e}");
    }
}

#[test]
fn a_planted_lock_or_journal_symlink_is_not_followed() {
    let t = tempfile::tempdir().unwrap();
    let run = private(t.path());
    let victim = t.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, run.join("interfere.lock")).unwrap();
    let e = Journal::open(&run).err().unwrap();
    assert!(e.to_string().contains("symlink"), "{e}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");

    std::fs::remove_file(run.join("interfere.lock")).unwrap();
    std::os::unix::fs::symlink(&victim, run.join("interfere.journal")).unwrap();
    let e = journal::restore(&run).err().unwrap();
    assert!(e.to_string().contains("symlink"), "{e}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");

    // The temporary file of a save: a planted symlink is replaced, never written through.
    std::fs::remove_file(run.join("interfere.journal")).unwrap();
    std::os::unix::fs::symlink(&victim, run.join("interfere.journal.tmp")).unwrap();
    let (mut j, _) = Journal::open(&run).unwrap();
    j.record(Change::Dir {
        path: t.path().join(format!("{DIR_PREFIX}z")),
    })
    .unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    drop(j);
}

#[test]
fn hostile_entries_are_refused_by_shape() {
    let bad = [
        // Restore /etc/passwd "back" to a line of the attacker's choosing.
        serde_json::json!({"id": 1, "what": "x", "kind": "scheduler", "device": "sda", "file": "/etc/passwd", "was": "root::0:0::/root:/bin/sh"}),
        serde_json::json!({"id": 1, "what": "x", "kind": "scheduler", "device": "../../etc", "file": "/sys/block/../../etc/queue/scheduler", "was": "none"}),
        serde_json::json!({"id": 1, "what": "x", "kind": "scheduler", "device": "sda", "file": "/sys/block/sda/queue/scheduler", "was": "none\nbfq"}),
        // Queue settings only name nr_requests or iosched/<name>, with one-line values.
        serde_json::json!({"id": 1, "what": "x", "kind": "queue_settings", "device": "sda", "scheduler": "bfq", "values": {"../../../../etc/passwd": "root::0:0"}}),
        serde_json::json!({"id": 1, "what": "x", "kind": "queue_settings", "device": "sda", "scheduler": "bfq", "values": {"iosched/../../x": "1"}}),
        serde_json::json!({"id": 1, "what": "x", "kind": "queue_settings", "device": "sda", "scheduler": "bfq", "values": {"iosched/slice_idle": "1\n2"}}),
        serde_json::json!({"id": 1, "what": "x", "kind": "queue_settings", "device": "../../etc", "scheduler": "bfq", "values": {"nr_requests": "64"}}),
        serde_json::json!({"id": 1, "what": "x", "kind": "dir", "path": "/etc"}),
        serde_json::json!({"id": 1, "what": "x", "kind": "dir", "path": "/home/../etc/.disktier-interfere-x"}),
        serde_json::json!({"id": 1, "what": "x", "kind": "dir", "path": "relative/.disktier-interfere-x"}),
        serde_json::json!({"id": 1, "what": "x", "kind": "cgroup", "path": "/sys/fs/cgroup/system.slice"}),
        serde_json::json!({"id": 1, "what": "x", "kind": "subtree_control", "file": "/etc/shadow", "controller": "io"}),
        serde_json::json!({"id": 1, "what": "x", "kind": "subtree_control", "file": "/sys/fs/cgroup/cgroup.subtree_control", "controller": "memory"}),
        serde_json::json!({"id": 1, "what": "x", "kind": "process", "pid": -1, "start_time": 5}),
        serde_json::json!({"id": 1, "what": "x", "kind": "process", "pid": 0, "start_time": 5}),
        serde_json::json!({"id": 1, "what": "x", "kind": "process", "pid": 1, "start_time": 5}),
        serde_json::json!({"id": 1, "what": "x", "kind": "rehome", "pid": 1, "start_time": 5, "home": "/sys/fs/cgroup"}),
    ];
    for e in bad {
        let doc = serde_json::json!({"schema_version": 1, "owner_pid": 1, "entries": [e]});
        let r = journal::parse(doc.to_string().as_bytes());
        assert!(r.is_err(), "accepted {e}");
    }
    let huge = vec![b' '; (journal::MAX_JOURNAL_BYTES + 1) as usize];
    assert!(journal::parse(&huge).unwrap_err().contains("bytes"));
}

#[test]
fn a_planted_journal_with_a_hostile_entry_is_not_replayed_at_all() {
    let t = tempfile::tempdir().unwrap();
    let run = private(t.path());
    // A genuine-looking scratch directory: would be removed if the journal were replayed.
    let ours = t.path().join(format!("{DIR_PREFIX}ours"));
    std::fs::create_dir(&ours).unwrap();
    // A file shaped like a target: a "scheduler" file that is not on sysfs.
    let victim = t.path().join("passwd");
    std::fs::write(&victim, "root:x:0:0\n").unwrap();
    let cases = [
        serde_json::json!({"id": 2, "what": "x", "kind": "scheduler", "device": "sda", "file": victim, "was": "none"}),
        // Shaped right, but not on a cgroup filesystem.
        serde_json::json!({"id": 2, "what": "x", "kind": "cgroup", "path": t.path().join("disktier-interfere-1")}),
        serde_json::json!({"id": 2, "what": "x", "kind": "subtree_control", "file": t.path().join("cgroup.subtree_control"), "controller": "io"}),
    ];
    std::fs::create_dir(t.path().join("disktier-interfere-1")).unwrap();
    std::fs::write(t.path().join("cgroup.subtree_control"), "memory\n").unwrap();
    for hostile in cases {
        plant(
            &run,
            serde_json::json!([
                {"id": 1, "what": "created dir", "kind": "dir", "path": ours},
                hostile
            ]),
        );
        let e = journal::restore(&run).err().unwrap();
        assert!(matches!(e, InterfereError::BadJournal { .. }), "{e:?}");
        assert!(e.to_string().contains("nothing in it was replayed"), "{e}");
        assert!(Journal::open(&run).is_err(), "the next run must refuse too");
        assert!(ours.exists(), "the valid entry was replayed");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root:x:0:0\n");
        assert!(t.path().join("disktier-interfere-1").exists());
        assert_eq!(
            std::fs::read_to_string(t.path().join("cgroup.subtree_control")).unwrap(),
            "memory\n"
        );
        assert!(
            run.join("interfere.journal").exists(),
            "kept for inspection"
        );
    }
    if is_root() {
        // A scratch directory that is not this user's (root's) own.
        let theirs = t.path().join(format!("{DIR_PREFIX}theirs"));
        std::fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        plant(
            &run,
            serde_json::json!([{"id": 1, "what": "x", "kind": "dir", "path": theirs}]),
        );
        let e = journal::restore(&run).err().unwrap();
        assert!(e.to_string().contains("65534"), "{e}");
        assert!(theirs.exists());
    }
    // A sound journal is replayed.
    plant(
        &run,
        serde_json::json!([{"id": 1, "what": "created dir", "kind": "dir", "path": ours}]),
    );
    let r = journal::restore(&run).unwrap();
    assert_eq!(r.undone.len(), 1, "{r:?}");
    assert!(!ours.exists());
    assert!(!run.join("interfere.journal").exists());
}

#[test]
fn a_run_never_records_what_a_restore_would_refuse() {
    let t = tempfile::tempdir().unwrap();
    let run = private(t.path());
    let (mut j, _) = Journal::open(&run).unwrap();
    assert!(j
        .record(Change::Dir {
            path: "/etc".into()
        })
        .is_err());
    assert!(j
        .record(Change::Process {
            pid: -1,
            start_time: 1,
            group: true,
        })
        .is_err());
    assert!(j.describe().is_empty());
}

/// The cgroup hierarchy to test in: v1 blkio or the v2 root, where root can create groups.
fn cgroup_root() -> Option<PathBuf> {
    if !disktier_testkit::require(is_root(), "root (creating cgroups)") {
        return None;
    }
    [
        "/sys/fs/cgroup/blkio",
        "/sys/fs/cgroup/unified",
        "/sys/fs/cgroup",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.join("cgroup.procs").exists())
}

fn cgroup_of(pid: u32, root: &Path) -> PathBuf {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let ctl = if root.ends_with("blkio") {
        ":blkio:"
    } else {
        "0::"
    };
    let rel = text
        .lines()
        .find_map(|l| l.find(ctl).map(|i| l[i + ctl.len()..].to_string()))
        .unwrap();
    root.join(rel.trim_start_matches('/'))
}

#[test]
fn after_sigkill_a_moved_process_goes_home_its_cgroup_goes_and_the_aggressor_dies() {
    let Some(root) = cgroup_root() else { return };
    let t = tempfile::tempdir().unwrap();
    let run = private(t.path());
    // A stand-in for disktier's own process (moved by cgroup-latency) and one for the aggressor.
    let mut moved = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let mut aggressor = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let home = cgroup_of(moved.id(), &root);
    let group = root.join(format!("disktier-interfere-test-{}", std::process::id()));
    std::fs::create_dir(&group).unwrap();
    std::fs::write(group.join("cgroup.procs"), moved.id().to_string()).unwrap();
    assert_eq!(cgroup_of(moved.id(), &root), group);
    let start = |pid: u32| journal::process_start_time(pid as i32).unwrap();
    // What a run killed at this point leaves: its journal, in the order it was written.
    plant(
        &run,
        serde_json::json!([
            {"id": 1, "what": "created cgroup", "kind": "cgroup", "path": group},
            {"id": 2, "what": "moved", "kind": "rehome", "pid": moved.id(), "start_time": start(moved.id()), "home": home},
            {"id": 3, "what": "started", "kind": "process", "pid": aggressor.id(), "start_time": start(aggressor.id())},
        ]),
    );
    let r = journal::restore(&run).unwrap();
    assert_eq!(r.undone.len(), 3, "{r:?}");
    assert!(r.failed.is_empty(), "{r:?}");
    assert_eq!(cgroup_of(moved.id(), &root), home, "not moved back");
    assert!(!group.exists(), "cgroup left");
    let status = aggressor.wait().unwrap();
    assert!(!status.success(), "the aggressor was not killed");
    moved.kill().unwrap();
    moved.wait().unwrap();
    assert!(!run.join("interfere.journal").exists());
}

/// QA (helper Z, session 26): `--restore` after a SIGKILL wrote the journaled scheduler to
/// whatever disk had the device's name by then: a loop device detached and its name given to
/// another backing file got the old disk's scheduler. The journal now keeps the disk's
/// `diskseq`, and a device whose diskseq differs is left alone with a note. On a real loop
/// device of this test's own (root; skipped otherwise).
#[test]
fn restore_leaves_a_device_that_is_another_disk_now_alone() {
    use disktier_interfere::scheduler;
    let Some(dev) = disktier_testkit::loop_dev(16 << 20) else {
        eprintln!("skipped: no loop devices");
        return;
    };
    let name = dev.name();
    let Some(seq) = scheduler::diskseq(&name) else {
        eprintln!("skipped: this kernel has no diskseq");
        return;
    };
    let file = Path::new("/sys/block").join(&name).join("queue/scheduler");
    let now = scheduler::read(&file).unwrap().active;
    let other = if now == "none" { "mq-deadline" } else { "none" };
    let change = |disk| Change::Scheduler {
        device: name.clone(),
        file: file.clone(),
        was: other.into(),
        disk,
    };
    let notes = change(Some(seq + 1000)).undo_noting().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with(&format!(
            "{name} is another disk now (diskseq {} when it was changed, {seq} now)",
            seq + 1000
        )),
        "{notes:?}"
    );
    assert_eq!(scheduler::read(&file).unwrap().active, now, "left alone");
    // The same disk (or a journal written before diskseq was kept) is put back.
    change(Some(seq)).undo_noting().unwrap();
    assert_eq!(scheduler::read(&file).unwrap().active, other);
    change(None).undo_noting().unwrap();
    assert_eq!(scheduler::read(&file).unwrap().active, other);
    // And a journal entry with the disk reads back with it.
    let text = serde_json::to_string(&change(Some(seq))).unwrap();
    assert!(text.contains(&format!("\"disk\":{seq}")), "{text}");
    assert_eq!(
        serde_json::from_str::<Change>(&text).unwrap(),
        change(Some(seq))
    );
}
