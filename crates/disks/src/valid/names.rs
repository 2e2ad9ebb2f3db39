//! The names disktier derives from a mount point or bind directory (systemd unit names, file
//! and directory names) must each fit in 255 bytes: systemd refuses a longer unit name
//! (systemd.unit(5): "Unit names can be up to 255 characters long"; UNIT_NAME_MAX is 256 with
//! the NUL), and Linux a longer file name (NAME_MAX). A path's components may each be 255 bytes,
//! and unit-name escaping makes a character other than letters, digits, `:`, `_` and `.` four
//! bytes (`-` is `\x2d`), so a path the other checks accept can still make such a name too long
//! (found by QA: `render openshift` emitted invalid unit names, `render systemd -o` and `setup
//! --persist systemd` failed with a bare "File name too long"). These checks refuse it up
//! front, naming the option.

use super::{file_slug, invalid, unit_escape_path, Invalid, MountPath, NAME_MAX};

/// The longest names derived from a `--mount` path: the render's relabel service (the longest
/// unit name of setup and render; setup's boot unit `disktier-setup-*.service`, a mount unit, a
/// `--layout separate` disk's `DIR/N` unit and undo's journal `undo-*.json.tmp` are shorter).
fn mount_names(p: &MountPath) -> Vec<(&'static str, String)> {
    vec![(
        "systemd unit name",
        format!("disktier-relabel-{}.service", unit_escape_path(p)),
    )]
}

/// The names derived from a `--bind` path: its mount unit and setup's staging directory for
/// the copy (`.disktier-copy-SLUG` on the filesystem).
fn bind_names(p: &MountPath) -> Vec<(&'static str, String)> {
    vec![
        (
            "systemd unit name",
            format!("{}.mount", unit_escape_path(p)),
        ),
        (
            "copy directory name",
            format!(".disktier-copy-{}", file_slug(p)),
        ),
    ]
}

fn check(
    flag: &'static str,
    p: &MountPath,
    names: Vec<(&'static str, String)>,
) -> Result<(), Invalid> {
    match names.into_iter().find(|(_, n)| n.len() > NAME_MAX) {
        None => Ok(()),
        Some((what, name)) => Err(invalid(
            flag,
            p,
            format!(
                "the {what} derived from it would be {} bytes ({}...), over the {NAME_MAX} systemd and Linux allow: use a shorter path (in a unit name each character other than letters, digits, : _ and . takes 4 bytes, e.g. - is \\x2d)",
                name.len(),
                &name[..40]
            ),
        )),
    }
}

/// Refuses a path (given as `flag`) that a mount unit's `Where=` cannot carry: one ending in a
/// blank. systemd strips the blanks at the end of a unit file's value, so `Where=/mnt/x ` reads
/// as /mnt/x, which does not match the unit's name (mnt-x\x20.mount), and systemd refuses the
/// unit (found by QA: render systemd and setup --persist systemd wrote such units). Only where a
/// mount unit is written: fstab (`\040`) and mount(8) carry the blank, so a setup persisted
/// otherwise, and its undo, keep taking such a path.
pub fn check_unit_where(flag: &'static str, p: &MountPath) -> Result<(), Invalid> {
    if p.ends_with(' ') {
        return Err(invalid(
            flag,
            p,
            "it ends with a blank, which systemd drops from a mount unit's Where= (the unit would then not match its name, and systemd refuses it): remove the trailing blank, or persist with fstab",
        ));
    }
    Ok(())
}

/// Refuses a `--mount` path (as `flag`) whose derived unit names would exceed 255 bytes.
pub fn check_mount_names(flag: &'static str, p: &MountPath) -> Result<(), Invalid> {
    check(flag, p, mount_names(p))
}

/// Refuses a `--bind` path (as `flag`) whose derived unit or directory names would exceed 255
/// bytes.
pub fn check_bind_names(flag: &'static str, p: &MountPath) -> Result<(), Invalid> {
    check(flag, p, bind_names(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mp(s: &str) -> MountPath {
        MountPath::parse("--mount", s).unwrap()
    }

    #[test]
    fn names_over_255_bytes_are_refused_naming_the_option() {
        // The longest --mount that fits: 255 - len("disktier-relabel-.service") = 230.
        let fits = mp(&format!("/mnt/{}", "a".repeat(226)));
        assert_eq!(unit_escape_path(&fits).len(), 230);
        assert!(check_mount_names("--mount", &fits).is_ok());
        let long = mp(&format!("/mnt/{}", "a".repeat(227)));
        let e = check_mount_names("--mount", &long).unwrap_err();
        assert_eq!(e.flag, "--mount");
        assert!(
            e.why.starts_with(
                "the systemd unit name derived from it would be 256 bytes (disktier-relabel-mnt-aaaaaaaaaaaaaaaaaaa...), over the 255 systemd and Linux allow"
            ),
            "{e}"
        );
        // QA's case: one 240-byte component.
        assert!(check_mount_names("--mount", &mp(&format!("/mnt/{}", "a".repeat(240)))).is_err());
        // Escaping counts: 60 hyphens are 240 bytes in a unit name.
        let dashes = mp(&format!("/m/{}", "-".repeat(60)));
        assert!(check_mount_names("--mount", &dashes).is_err());
        assert!(check_bind_names("--bind", &dashes).is_ok());
        // A bind's copy directory `.disktier-copy-SLUG` is its longest name for a plain path
        // (the slug is the escaped path then); with a hyphen, its mount unit can be.
        let bind = mp(&format!("/srv/{}", "b".repeat(236)));
        assert!(check_bind_names("--bind", &bind).is_ok());
        assert!(check_bind_names("--bind", &mp(&format!("/srv/{}", "b".repeat(237)))).is_err());
        let e = check_bind_names("--bind", &mp(&format!("/m/{}", "-".repeat(63)))).unwrap_err();
        assert!(
            e.why
                .starts_with("the systemd unit name derived from it would be 260 bytes"),
            "{e}"
        );
        let hashed = mp(&format!("/srv/{}-x", "b".repeat(225)));
        let e = check_bind_names("--bind", &hashed).unwrap_err();
        assert!(
            e.why.starts_with("the copy directory name derived from it"),
            "{e}"
        );
    }
}
