//! Unit tests of `target.rs`.

use super::*;

#[test]
fn fs_names() {
    assert_eq!(fs_name(0x58465342), "xfs");
    assert_eq!(fs_name(0xEF53), "ext4");
    assert_eq!(fs_name(0x01021994), "tmpfs");
    assert_eq!(fs_name(0x1234), "0x1234");
    // linux/magic.h: DEVPTS_SUPER_MAGIC (0x62646576 is BDEVFS_MAGIC, once listed as devpts).
    assert_eq!(fs_name(0x1cd1), "devpts");
}

/// The kernel's pseudo-filesystems are named as such; a real or RAM filesystem is not.
#[test]
fn pseudo_filesystems_are_told_apart() {
    assert_eq!(pseudo_fs(Path::new("/proc")).as_deref(), Some("proc"));
    assert_eq!(pseudo_fs(Path::new("/sys")).as_deref(), Some("sysfs"));
    assert_eq!(pseudo_fs(Path::new("/dev/shm")), None);
    assert_eq!(pseudo_fs(&std::env::temp_dir()), None);
}

#[test]
fn scheduler_line() {
    assert_eq!(
        active_scheduler("none [mq-deadline] kyber bfq").as_deref(),
        Some("mq-deadline")
    );
    assert_eq!(
        active_scheduler("[none] mq-deadline").as_deref(),
        Some("none")
    );
    assert_eq!(active_scheduler("none"), None);
}

#[test]
fn signatures() {
    let blank = vec![0u8; 70000];
    assert_eq!(signature(&blank), None);
    let mut x = blank.clone();
    x[..4].copy_from_slice(b"XFSB");
    assert!(matches!(signature(&x), Some(InUse::Signature(s)) if s.contains("xfs")));
    let mut e = blank.clone();
    e[1080] = 0x53;
    e[1081] = 0xEF;
    assert!(matches!(signature(&e), Some(InUse::Signature(s)) if s.contains("ext")));
    let mut s = blank.clone();
    s[4086..4096].copy_from_slice(b"SWAPSPACE2");
    assert!(matches!(signature(&s), Some(InUse::Signature(w)) if w.contains("swap")));
    let mut l = blank.clone();
    l[..6].copy_from_slice(b"LUKS\xba\xbe");
    assert!(matches!(signature(&l), Some(InUse::Signature(w)) if w.contains("LUKS")));
    let mut g = blank.clone();
    g[512..520].copy_from_slice(b"EFI PART");
    assert_eq!(signature(&g), Some(InUse::Partitions("a GPT")));
    // MBR: the boot signature alone is not a table; a used entry is.
    let mut m = blank.clone();
    m[510] = 0x55;
    m[511] = 0xAA;
    assert_eq!(signature(&m), None);
    m[446 + 4] = 0x83;
    assert_eq!(signature(&m), Some(InUse::Partitions("an MBR")));
    // Short reads (a tiny device) are fine.
    assert_eq!(signature(&[0u8; 10]), None);
}

#[test]
fn blkid_finds_what_the_magic_table_does_not() {
    use disktier_cmd::RecordingRunner;
    let r = RecordingRunner::new().with_programs(&["blkid"]);
    r.on(
        "blkid",
        &["-p", "-o", "export"],
        0,
        "DEVNAME=/dev/sdx\nLABEL=tank\nTYPE=zfs_member\nUSAGE=filesystem\n",
    );
    assert_eq!(
        blkid_signature(&r, Path::new("/dev/sdx")),
        Some(InUse::Signature("a zfs_member signature (blkid)".into()))
    );
    assert!(
        r.transcript().contains("blkid -p -o export /dev/sdx"),
        "{}",
        r.transcript()
    );
    let r = RecordingRunner::new().with_programs(&["blkid"]);
    r.on(
        "blkid",
        &["-p"],
        0,
        "DEVNAME=/dev/sdx\nPTUUID=ab\nPTTYPE=gpt\n",
    );
    assert_eq!(
        blkid_signature(&r, Path::new("/dev/sdx")),
        Some(InUse::Partitions("a GPT"))
    );
    let r = RecordingRunner::new().with_programs(&["blkid"]);
    r.on("blkid", &["-p"], 2, "");
    assert_eq!(blkid_signature(&r, Path::new("/dev/sdx")), None);
    // Fail closed: blkid that errors (any other status, or 2 with an error: it could not
    // open the device) is content it could not identify, never "blank".
    for (status, stderr) in [(4, "blkid: error: /dev/sdx: Input/output error"), (1, "")] {
        let r = RecordingRunner::new().with_programs(&["blkid"]);
        r.answer(
            "blkid",
            &["-p"],
            disktier_cmd::Output {
                status,
                stdout: String::new(),
                stderr: stderr.to_string(),
            },
        );
        match blkid_signature(&r, Path::new("/dev/sdx")) {
            Some(InUse::Signature(what)) => {
                assert!(what.contains("could not identify"), "{what}");
                assert!(what.contains(&format!("exit status {status}")), "{what}");
            }
            other => panic!("blkid exit {status} must fail closed, got {other:?}"),
        }
    }
    let r = RecordingRunner::new().with_programs(&["blkid"]);
    r.answer(
        "blkid",
        &["-p"],
        disktier_cmd::Output {
            status: 2,
            stdout: String::new(),
            stderr: "blkid: /dev/sdx: Permission denied".to_string(),
        },
    );
    assert!(matches!(
        blkid_signature(&r, Path::new("/dev/sdx")),
        Some(InUse::Signature(w)) if w.contains("Permission denied")
    ));
    // Exit 0 without a type: something is there.
    let r = RecordingRunner::new().with_programs(&["blkid"]);
    r.on("blkid", &["-p"], 0, "DEVNAME=/dev/sdx\n");
    assert!(blkid_signature(&r, Path::new("/dev/sdx")).is_some());
    // No blkid installed: nothing to add, and nothing is run.
    let r = RecordingRunner::new().with_programs(&[]);
    assert_eq!(blkid_signature(&r, Path::new("/dev/sdx")), None);
    assert!(r.transcript().is_empty());
}

#[test]
fn mountinfo_lines() {
    let mi = "22 1 7:3 / /mnt/a rw,relatime shared:1 - xfs /dev/loop3 rw\n\
              23 1 7:30 / /mnt/my\\040dir rw - ext4 /dev/loop30 rw\n";
    assert_eq!(mounts_of(mi, 7, 3), vec!["/mnt/a".to_string()]);
    assert_eq!(mounts_of(mi, 7, 30), vec!["/mnt/my dir".to_string()]);
    assert!(mounts_of(mi, 7, 4).is_empty());
}

#[test]
fn classifies_files_dirs_and_missing_paths() {
    let d = tempfile::tempdir().unwrap();
    let c = classify(d.path()).unwrap();
    assert_eq!(c.kind, Kind::Directory);
    assert_eq!(c.info.kind, "directory");
    assert!(c.info.fs_type.is_some());
    assert!(c.free.is_some());
    let f = d.path().join("f");
    std::fs::write(&f, b"hello").unwrap();
    let c = classify(&f).unwrap();
    assert_eq!((c.kind, c.len), (Kind::File, 5));
    let n = d.path().join("new");
    assert_eq!(classify(&n).unwrap().kind, Kind::NewFile);
    let e = classify(&d.path().join("no/such")).unwrap_err();
    assert!(matches!(e, EngineError::MissingPath { .. }), "{e}");
    let e = classify(Path::new("/dev/null")).unwrap_err();
    assert!(matches!(e, EngineError::WrongKind { .. }), "{e}");
}

#[test]
fn tmpfs_has_no_direct() {
    let shm = Path::new("/dev/shm");
    if classify(shm).ok().and_then(|c| c.info.fs_type) != Some("tmpfs".into()) {
        eprintln!("skipped: /dev/shm is not tmpfs here");
        return;
    }
    let c = classify(shm).unwrap();
    let e = check_direct(&c, shm).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/dev/shm is on tmpfs, which has no O_DIRECT: pass --direct=false"
    );
}

/// QA (session 29): `bench FIFO` said the FIFO "is a special file", which does not say what it
/// is; it names a FIFO (and a socket) as such.
#[test]
fn a_fifo_is_named_as_one() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("p");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo could not make a FIFO");
        return;
    }
    let e = match classify(&fifo) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a FIFO was taken as a target"),
    };
    assert!(
        e.contains("p is a FIFO (named pipe), which holds no data to measure, but disktier needs"),
        "{e}"
    );
}
