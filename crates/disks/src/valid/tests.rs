//! Unit tests of the validated values.

use super::*;
use std::path::Path;

#[test]
fn mount_paths_are_normalised_or_refused() {
    assert_eq!(
        MountPath::parse("--mount", "/var//lib/x/").unwrap(),
        "/var/lib/x"
    );
    for bad in [
        "",
        "/",
        "//",
        "rel",
        "/a/../b",
        "/a/./b",
        "/a\nb",
        "/a\0b",
        "/a\tb",
        "/a\u{7f}",
        "/a\u{85}b",
        "/a$b",
        "/a'b",
        "/a\\b",
        "/a%b",
        "/ü",
    ] {
        assert!(MountPath::parse("--mount", bad).is_err(), "{bad:?}");
    }
    let e = MountPath::parse("--mount", "/mnt/a\nEOF")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--mount \"/mnt/a\\nEOF\"") && e.contains("control character"),
        "{e}"
    );
    assert!(MountPath::parse("--mount", &format!("/{}", "a".repeat(300))).is_err());
}

#[test]
fn a_mount_path_ending_in_a_blank_is_refused_where_a_unit_is_written() {
    // Found by QA: render systemd --mount '/mnt/x ' wrote `Where=/mnt/x ` in mnt-x\x20.mount,
    // which systemd refuses ("Where= setting doesn't match unit name"): it strips the blank.
    for bad in ["/mnt/x ", "/mnt/x /", "/mnt/x  //", "/ "] {
        let p = MountPath::parse("--bind", bad).expect("fstab and mount(8) carry it");
        let e = check_unit_where("--bind", &p).unwrap_err().to_string();
        assert!(
            e.ends_with("it ends with a blank, which systemd drops from a mount unit's Where= (the unit would then not match its name, and systemd refuses it): remove the trailing blank, or persist with fstab"),
            "{bad:?}: {e}"
        );
    }
    // Blanks elsewhere are fine: the unit's value keeps them.
    for ok in ["/mnt/my disk", "/mnt/x /y", "/mnt/ x"] {
        let p = MountPath::parse("--mount", ok).unwrap();
        assert!(check_unit_where("--mount", &p).is_ok(), "{ok}");
    }
}

#[test]
fn options_follow_the_grammar() {
    let o = MountOptions::parse(
        "--options",
        &[
            "prjquota, uid=1000".into(),
            "x-systemd.device-timeout=5s".into(),
        ],
    )
    .unwrap();
    assert_eq!(
        o.joined(),
        "defaults,noatime,prjquota,uid=1000,x-systemd.device-timeout=5s"
    );
    for bad in [
        "a\nb", "a b", "a=", "=b", "a='b'", "a%b", "a$b", "-x", "a=b,c\\d", "a\"b",
    ] {
        assert!(
            MountOptions::parse("--options", &[bad.into()]).is_err(),
            "{bad:?}"
        );
    }
}

#[test]
fn mount_operations_are_refused_as_options() {
    // Found by QA: `--options remount` (or bind, move, loop) passed, mkfs ran, and the mount
    // then failed at every run.
    for op in [
        "remount",
        "bind",
        "rbind",
        "move",
        "loop",
        "offset=4096",
        "Bind",
    ] {
        let e = MountOptions::parse("--options", &[format!("prjquota,{op}")])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is not a mount option but a mount(8) operation") && e.ends_with("drop it"),
            "{op}: {e}"
        );
    }
    // Options that only contain such a word are options.
    assert!(MountOptions::parse("--options", &["nobarrier,loopback=1".into()]).is_ok());
}

#[test]
fn an_atime_option_replaces_the_default_noatime() {
    // Found by QA: `--options relatime` gave `defaults,noatime,relatime`, which the kernel
    // mounts noatime (noatime wins wherever it stands), and fstab and units kept both.
    let parse = |raw: &str| MountOptions::parse("--options", &[raw.into()]).unwrap();
    for (raw, joined, extra) in [
        ("", "defaults,noatime", ""),
        ("prjquota", "defaults,noatime,prjquota", "prjquota"),
        ("noatime", "defaults,noatime", ""),
        ("relatime", "defaults,relatime", "relatime"),
        (
            "nodev,strictatime",
            "defaults,nodev,strictatime",
            "nodev,strictatime",
        ),
        ("atime", "defaults,atime", "atime"),
        ("norelatime", "defaults,norelatime", "norelatime"),
        ("nostrictatime", "defaults,nostrictatime", "nostrictatime"),
        // As given, in the user's order: the kernel decides (live.rs reads it as it does).
        (
            "relatime,noatime",
            "defaults,relatime,noatime",
            "relatime,noatime",
        ),
        (
            "noatime,relatime",
            "defaults,noatime,relatime",
            "noatime,relatime",
        ),
    ] {
        let o = parse(raw);
        assert_eq!(o.joined(), joined, "{raw}");
        assert_eq!(o.extra().join(","), extra, "{raw}");
        // What `--options` repeats them with gives the same options back.
        assert_eq!(parse(&o.extra().join(",")), o, "{raw}");
    }
}

#[test]
fn owners_labels_modes() {
    assert!(Owner::parse("--owner", "ec2-user:ec2-user").is_ok());
    assert!(Owner::parse("--owner", "1000:1000").is_ok());
    for bad in [
        "",
        ":",
        "a:",
        "root;rm",
        "a b",
        "-x",
        "a\n",
        "99999999999",
        "a:b:c",
    ] {
        assert!(Owner::parse("--owner", bad).is_err(), "{bad:?}");
    }
    assert_eq!(Mode::parse("--mode", "750").unwrap().to_string(), "0750");
    assert!(Mode::parse("--mode", "99999").is_err());
    assert!(Label::parse("--label", "-L", "xfs", 12, 0, "").is_err());
    assert!(Label::parse("--label", "thirteenchars", "xfs", 12, 0, "").is_err());
    assert!(Label::parse("--label", "data_1", "xfs", 12, 0, "").is_ok());
}

/// A node root whose etc/passwd and etc/group hold `passwd` and `group`, for owner lookups in a
/// fixture tree.
pub(crate) fn user_files(passwd: &str, group: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("etc")).unwrap();
    std::fs::write(t.path().join("etc/passwd"), passwd).unwrap();
    std::fs::write(t.path().join("etc/group"), group).unwrap();
    t
}

#[test]
fn owners_exist_in_fixture_files() {
    let t = user_files("ec2-user:x:1000:1001::/h:/bin/sh\n", "ec2-user:x:1001:\n");
    let o = Owner::parse("--owner", "ec2-user").unwrap();
    assert_eq!(o.check_exists("--owner", t.path()).unwrap(), (1000, 1001));
    let o = Owner::parse("--owner", "nobody:ec2-user").unwrap();
    assert!(o
        .check_exists("--owner", t.path())
        .unwrap_err()
        .to_string()
        .contains("no user"));
    // The real node: root exists everywhere.
    let o = Owner::parse("--owner", "root:root").unwrap();
    assert_eq!(o.check_exists("--owner", Path::new("/")).unwrap(), (0, 0));
    // A user alone takes its primary group from the node's database; names it lacks are named.
    let o = Owner::parse("--owner", "root").unwrap();
    assert_eq!(o.check_exists("--owner", Path::new("/")).unwrap(), (0, 0));
    for (raw, want) in [
        ("disktier-no-such-user", "no user"),
        ("root:disktier-no-such-group", "no group"),
    ] {
        let o = Owner::parse("--owner", raw).unwrap();
        let e = o
            .check_exists("--owner", Path::new("/"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{raw}: {e}");
    }
}

#[test]
fn symlinked_directories_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let real = t.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, t.path().join("link")).unwrap();
    let p = |s: &str| MountPath::parse_path("--mount", &t.path().join(s)).unwrap();
    assert!(p("real/new/dir").check_no_symlink("--mount").is_ok());
    let e = p("link/x")
        .check_no_symlink("--mount")
        .unwrap_err()
        .to_string();
    assert!(e.contains("symbolic link"), "{e}");
    assert!(p("link").check_no_symlink("--mount").is_err());
}

#[test]
fn escapes_round_trip() {
    for p in ["/a b/c", "/mnt/k8s-disks/0", "/.x/y", "/a:b/c_d/e.f"] {
        assert_eq!(fstab_unescape(&fstab_escape(p)), p);
        assert_eq!(unit_unescape_path(&unit_escape_path(p)), p);
    }
}

#[test]
fn slugs_are_unique() {
    let s = |p: &str| file_slug(&MountPath::parse("--mount", p).unwrap());
    assert_eq!(s("/var/lib/containers"), "var-lib-containers");
    assert_ne!(s("/a-b"), s("/a/b"));
    assert_ne!(s("/a b"), s("/a_b"));
    assert!(s("/mnt/k8s-disks/0").starts_with("mnt-k8s_disks-0+"));
    let k = |p: &str| k8s_slug(&MountPath::parse("--mount", p).unwrap());
    assert_eq!(k("/var/lib/containers"), "var-lib-containers");
    assert_ne!(k("/a-b"), k("/a/b"));
    assert!(k("/Data_x/Y").starts_with("data-x-y--"));
}
