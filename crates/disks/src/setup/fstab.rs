//! fstab: the lines setup writes (by UUID, `nofail`, tagged `# disktier`), merging them with
//! what the file holds (other setups' lines and foreign lines kept byte for byte), recognising
//! setup's own lines for a mount point (for `--undo`), and finding where a filesystem was
//! persisted.

use crate::valid::{fstab_escape, fstab_unescape, MountPath};
use std::path::Path;

/// The tag that marks fstab lines disktier owns (and may rewrite).
pub const FSTAB_TAG: &str = "# disktier";

/// One fstab line (fstab(5)); fsck pass 0: a fresh ephemeral filesystem has nothing to check.
pub fn fstab_line(what: &str, where_: &MountPath, fstype: &str, options: &str) -> String {
    format!(
        "{} {} {fstype} {options},nofail 0 0 {FSTAB_TAG}",
        fstab_escape(what),
        fstab_escape(where_)
    )
}

/// An fstab field as a path to compare: unescaped (`\040`), repeated slashes folded, no
/// trailing slash (`/data//a/` is `/data/a`), so that two spellings of one target are one.
pub fn fstab_path(field: &str) -> String {
    let p = fstab_unescape(field);
    let mut out = String::with_capacity(p.len());
    for part in p.split('/').filter(|c| !c.is_empty()) {
        out.push('/');
        out.push_str(part);
    }
    if out.is_empty() && p.starts_with('/') {
        out.push('/');
    }
    if !p.starts_with('/') {
        return p;
    }
    out
}

/// Whether `path` lies below `dir` (both as [`fstab_path`] gives them).
fn below(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.len() > 1 && (rest.starts_with('/') || dir == "/"))
}

/// Whether an fstab line is one disktier setup wrote for `mount`: tagged, and it mounts `mount`
/// or `--layout separate`'s `DIR/0`, `DIR/1`, ..., or binds a directory that lies on it. Lines
/// other setups wrote for other mount points are not (setup and undo leave them alone).
pub fn setup_line_for(line: &str, mount: &MountPath) -> bool {
    let f: Vec<&str> = line.split_whitespace().collect();
    if !line.trim_end().ends_with(FSTAB_TAG) || f.len() < 3 {
        return false;
    }
    let m = fstab_path(&fstab_escape(mount.as_str()));
    let target = fstab_path(f[1]);
    let index = target
        .strip_prefix(&m)
        .and_then(|r| r.strip_prefix('/'))
        .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()));
    target == m || index || (f[2] == "none" && below(&fstab_path(f[0]), &m))
}

/// The new fstab: `existing` without the lines an earlier setup of `mount` wrote (or a tagged
/// line on one of the new targets), plus `lines` (in the place of the first line it drops, else at the end: a re-run leaves the file as it was); other setups' lines and foreign lines stay,
/// byte for byte. Errors with the conflicting line when a line disktier did not write already
/// mounts one of the targets (however its path is spelled).
pub fn merge_fstab(existing: &str, mount: &MountPath, lines: &[String]) -> Result<String, String> {
    let targets: Vec<String> = lines
        .iter()
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(fstab_path)
        .collect();
    let mut out = String::new();
    let ours: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut placed = false;
    // Lines not ours are kept byte for byte, line ending included (CRLF too); ours take the place
    // of the first line an earlier run wrote, so that a re-run leaves the file as it was.
    for raw in existing.split_inclusive('\n') {
        let l = raw.strip_suffix('\n').unwrap_or(raw);
        let l = l.strip_suffix('\r').unwrap_or(l);
        let t = l.trim_start();
        let target = (!t.starts_with('#'))
            .then(|| t.split_whitespace().nth(1))
            .flatten()
            .map(fstab_path);
        let on_ours = target.as_ref().is_some_and(|x| targets.contains(x));
        if l.trim_end().ends_with(FSTAB_TAG) {
            if on_ours || setup_line_for(l, mount) {
                if !placed {
                    out.push_str(&ours);
                    placed = true;
                }
                continue;
            }
        } else if on_ours {
            return Err(l.to_string());
        }
        out.push_str(raw);
        if !raw.ends_with('\n') {
            out.push('\n');
        }
    }
    if !placed {
        out.push_str(&ours);
    }
    Ok(out)
}

/// The mount point setup persisted for the filesystem with `uuid` below `root` (its fstab line
/// or mount unit), if any: where a setup of that filesystem can be undone.
pub fn persisted_target(root: &Path, uuid: &str) -> Option<String> {
    let fstab = std::fs::read_to_string(root.join("etc/fstab")).unwrap_or_default();
    let what = format!("UUID={uuid}");
    if let Some(t) = fstab.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (l.trim_end().ends_with(FSTAB_TAG) && f.len() > 1 && f[0] == what).then(|| fstab_path(f[1]))
    }) {
        return Some(t);
    }
    let what = format!("What=/dev/disk/by-uuid/{uuid}");
    let mut units: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("etc/systemd/system"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "mount"))
        .collect();
    units.sort();
    units.iter().find_map(|p| {
        let text = std::fs::read_to_string(p).ok()?;
        if !text.starts_with("# Written by `disktier setup`") || !text.lines().any(|l| l == what) {
            return None;
        }
        text.lines()
            .find_map(|l| l.strip_prefix("Where="))
            .map(str::to_string)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mp(s: &str) -> MountPath {
        MountPath::parse("--mount", s).unwrap()
    }

    #[test]
    fn fstab_merge_replaces_ours_and_refuses_foreign_lines() {
        let ours = vec![fstab_line(
            "UUID=u",
            &mp("/data"),
            "xfs",
            "defaults,noatime",
        )];
        let existing =
            "UUID=root / ext4 defaults 0 1\nUUID=old /data xfs defaults,nofail 0 0 # disktier\n";
        let data = mp("/data");
        let merged = merge_fstab(existing, &data, &ours).unwrap();
        assert_eq!(
            merged,
            "UUID=root / ext4 defaults 0 1\nUUID=u /data xfs defaults,noatime,nofail 0 0 # disktier\n"
        );
        assert_eq!(
            merge_fstab(&merged, &data, &ours).unwrap(),
            merged,
            "idempotent"
        );
        // A CRLF file keeps its foreign lines as they are.
        let crlf = "UUID=root / ext4 defaults 0 1\r\n";
        assert_eq!(
            merge_fstab(crlf, &data, &ours).unwrap(),
            format!("{crlf}{}\n", ours[0])
        );
        // A foreign line on the target is refused, however the path is spelled.
        for foreign in [
            "/dev/sdb /data ext4 defaults 0 2",
            "/dev/sdb /data/ ext4 defaults 0 2",
            "/dev/sdb //data ext4 defaults 0 2",
        ] {
            assert_eq!(
                merge_fstab(&format!("{foreign}\n"), &data, &ours).unwrap_err(),
                foreign
            );
        }
    }

    #[test]
    fn fstab_merge_keeps_the_lines_other_setups_wrote() {
        // Found by QA: a second setup (at /scratch, separate layout) dropped /data's line, and
        // /data's re-run then dropped /scratch/0 and /scratch/1.
        let data = vec![fstab_line("UUID=a", &mp("/data"), "xfs", "defaults")];
        let bind = fstab_line("/data/var-lib-x", &mp("/var/lib/x"), "none", "bind");
        let scratch: Vec<String> = ["/scratch/0", "/scratch/1"]
            .iter()
            .map(|t| fstab_line("UUID=s", &mp(t), "xfs", "defaults"))
            .collect();
        let first = merge_fstab("", &mp("/data"), &[data[0].clone(), bind.clone()]).unwrap();
        let both = merge_fstab(&first, &mp("/scratch"), &scratch).unwrap();
        assert_eq!(both, format!("{first}{}\n{}\n", scratch[0], scratch[1]));
        // A re-run of either leaves the file as it was (found in a spot check: /data's re-run
        // moved its line to the end, so the file was rewritten).
        assert_eq!(
            merge_fstab(&both, &mp("/data"), &[data[0].clone(), bind.clone()]).unwrap(),
            both
        );
        assert_eq!(merge_fstab(&both, &mp("/scratch"), &scratch).unwrap(), both);
        // /data's re-run without its bind: its own two lines go (its new one in their place),
        // /scratch's stay.
        let again = merge_fstab(&both, &mp("/data"), &data).unwrap();
        assert_eq!(
            again,
            format!("{}\n{}\n{}\n", data[0], scratch[0], scratch[1])
        );
        // A mount that only shares a prefix (/data2) is another setup's.
        let d2 = vec![fstab_line("UUID=b", &mp("/data2"), "xfs", "defaults")];
        let with_d2 = merge_fstab(&again, &mp("/data2"), &d2).unwrap();
        assert_eq!(merge_fstab(&with_d2, &mp("/data"), &data).unwrap(), with_d2);
        assert_eq!(
            with_d2,
            format!("{}\n{}\n{}\n{}\n", data[0], scratch[0], scratch[1], d2[0])
        );
        assert!(setup_line_for(&scratch[1], &mp("/scratch")));
        assert!(!setup_line_for(&scratch[1], &mp("/scratch/1x")));
        assert!(setup_line_for(&bind, &mp("/data")));
        assert!(!setup_line_for(&d2[0], &mp("/data")));
    }
}
