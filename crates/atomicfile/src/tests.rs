use super::*;
use std::os::unix::fs::PermissionsExt;

fn mode_of(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn replace_writes_the_bytes_with_the_mode_asked_and_leaves_nothing_else() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("a.sh");
    replace(&p, b"#!/bin/sh\n", Mode::Exact(0o755)).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"#!/bin/sh\n");
    // 0755 whatever the umask: fchmod, not the mode at creation.
    assert_eq!(mode_of(&p), 0o755);
    replace(&p, b"two\n", Mode::Exact(0o640)).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"two\n");
    assert_eq!(mode_of(&p), 0o640);
    assert_eq!(names(t.path()), ["a.sh"]);
}

#[test]
fn keep_or_keeps_the_replaced_files_mode_and_gives_a_new_file_the_default() {
    let t = tempfile::tempdir().unwrap();
    let old = t.path().join("fstab");
    std::fs::write(&old, "old\n").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o600)).unwrap();
    replace(&old, b"new\n", Mode::KeepOr(0o644)).unwrap();
    assert_eq!(mode_of(&old), 0o600);
    let new = t.path().join("report.html");
    replace(&new, b"x", Mode::KeepOr(0o644)).unwrap();
    assert_eq!(mode_of(&new), 0o644);
}

#[test]
fn umask_mode_is_what_file_create_gives() {
    let t = tempfile::tempdir().unwrap();
    let created = t.path().join("created");
    File::create(&created).unwrap();
    let p = t.path().join("trace.dttrace");
    replace(&p, b"x", Mode::Umask(0o666)).unwrap();
    assert_eq!(mode_of(&p), mode_of(&created));
}

#[test]
fn a_link_planted_at_the_destination_is_replaced_never_written_through() {
    let t = tempfile::tempdir().unwrap();
    let victim = t.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let p = t.path().join("disktier_check.prom");
    std::os::unix::fs::symlink(&victim, &p).unwrap();
    replace(&p, b"metrics\n", Mode::KeepOr(0o644)).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(!std::fs::symlink_metadata(&p)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&p).unwrap(), b"metrics\n");
    // A link is not a regular file: the new file gets the default, not the target's mode.
    assert_eq!(mode_of(&p), 0o644);
}

#[test]
fn staged_files_change_nothing_until_committed_and_a_dropped_one_is_removed() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a");
    let b = t.path().join("b");
    std::fs::write(&a, "old a").unwrap();
    let sa = Staged::with(&a, b"new a", Mode::KeepOr(0o644)).unwrap();
    let sb = Staged::with(&b, b"new b", Mode::KeepOr(0o644)).unwrap();
    assert_eq!(sa.path(), a);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
    assert!(!b.exists());
    let temps: Vec<String> = names(t.path())
        .into_iter()
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert_eq!(temps.len(), 2, "{temps:?}");
    assert!(temps.iter().any(|n| n.starts_with(".a.")), "{temps:?}");
    sa.commit().unwrap();
    drop(sb);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
    assert_eq!(names(t.path()), ["a"]);
}

#[test]
fn a_missing_directory_is_a_create_error_naming_it() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("nodir").join("x");
    let e = replace(&p, b"x", Mode::Exact(0o644)).unwrap_err();
    assert!(
        matches!(&e, AtomicError::Create { dir, .. } if dir == &t.path().join("nodir")),
        "{e:?}"
    );
    assert_eq!(e.io().kind(), std::io::ErrorKind::NotFound);
    assert!(e.to_string().contains("nodir"), "{e}");
    assert_eq!(
        std::error::Error::source(&e).map(|s| s.to_string()),
        Some(e.io().to_string()),
        "the I/O error is the source, not repeated in the message"
    );
    assert!(!e.to_string().contains(&e.io().to_string()), "{e}");
}

#[test]
fn a_directory_at_the_destination_is_a_write_error_and_the_temporary_file_goes() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("out");
    std::fs::create_dir(&p).unwrap();
    std::fs::write(p.join("inside"), "x").unwrap();
    let e = replace(&p, b"x", Mode::Exact(0o644)).unwrap_err();
    assert!(matches!(e, AtomicError::Write { .. }), "{e:?}");
    assert_eq!(names(t.path()), ["out"]);
    assert_eq!(names(&p), ["inside"]);
}

#[test]
fn a_bare_file_name_is_in_the_current_directory() {
    assert_eq!(dir_of(Path::new("report.html")), Path::new("."));
    assert_eq!(dir_of(Path::new("/")), Path::new("."));
    assert_eq!(dir_of(Path::new("d/x")), Path::new("d"));
}

/// QA: `-o /dev/full` replaced the device node with a regular file ('wrote /dev/full', exit 0).
/// A link to a device (here /dev/null, which stays untouched either way: the link is what the
/// rename replaced) and a socket are refused, and left as they were.
#[test]
fn a_device_or_socket_at_the_destination_is_refused_and_left() {
    let t = tempfile::tempdir().unwrap();
    let link = t.path().join("out");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let err = replace(&link, b"x\n", Mode::Umask(0o666)).unwrap_err();
    let msg = format!("{}: {}", err, err.io());
    assert!(
        msg.contains("a character device, not a regular file"),
        "{msg}"
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let sock = t.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let err = replace(&sock, b"x\n", Mode::Umask(0o666)).unwrap_err();
    assert!(err.io().to_string().contains("a socket"), "{err}");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&sock).unwrap().file_type().is_socket());
    assert!(names(t.path()).iter().all(|n| !n.ends_with(".tmp")));
}
