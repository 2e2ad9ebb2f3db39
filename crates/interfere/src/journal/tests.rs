use super::*;

#[test]
fn a_left_journal_is_undone_by_the_next_open_and_restore_is_idempotent() {
    let t = tempfile::tempdir().unwrap();
    let run_dir = t.path().join("run");
    let scratch = t.path().join(format!("{DIR_PREFIX}x"));
    {
        let (mut j, _) = Journal::open(&run_dir).unwrap();
        j.record(Change::Dir {
            path: scratch.clone(),
        })
        .unwrap();
        std::fs::create_dir(&scratch).unwrap();
        std::fs::write(scratch.join("obj"), b"x").unwrap();
        // Simulate SIGKILL: the journal stays, nothing is undone.
        std::mem::forget(j);
    }
    let file = Journal::file_in(&run_dir);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("created dir"), "{text}");
    // The forgotten journal still holds its lock's fd in this process; a real SIGKILL frees
    // it. Restore through the file directly.
    let r = undo_file(&file).unwrap();
    assert_eq!(r.undone.len(), 1, "{r:?}");
    assert!(!scratch.exists());
    assert!(!file.exists());
    assert!(undo_file(&file).unwrap().undone.is_empty());
}

#[test]
fn refuses_to_delete_what_is_not_ours() {
    let t = tempfile::tempdir().unwrap();
    let c = Change::Dir {
        path: t.path().to_path_buf(),
    };
    assert!(c.undo().is_err());
    assert!(t.path().exists());
}

#[test]
fn dropping_a_journal_undoes_it() {
    let t = tempfile::tempdir().unwrap();
    let scratch = t.path().join(format!("{DIR_PREFIX}y"));
    let run_dir = t.path().join("run");
    {
        let (mut j, _) = Journal::open(&run_dir).unwrap();
        j.record(Change::Dir {
            path: scratch.clone(),
        })
        .unwrap();
        std::fs::create_dir(&scratch).unwrap();
    }
    assert!(!scratch.exists());
    assert!(!Journal::file_in(&run_dir).exists());
}

#[test]
fn start_time_of_self_is_readable() {
    assert!(process_start_time(std::process::id() as i32).is_some());
    assert!(process_start_time(i32::MAX).is_none());
    // Field 22 of proc(5)'s stat, counted after the command name (field 2), which may hold
    // blanks.
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", std::process::id())).unwrap();
    let after_comm: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
    let field22: u64 = after_comm[22 - 3].parse().unwrap();
    assert_eq!(process_start_time(std::process::id() as i32), Some(field22));
}
