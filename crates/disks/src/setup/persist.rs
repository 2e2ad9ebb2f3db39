//! Making the mounts survive a reboot: systemd mount units (named as `systemd-escape --path`
//! names them) or fstab lines, by UUID, `nofail`, ordered before the container runtime and
//! kubelet (references.md, "what goes wrong" 6).

use std::path::Path;

/// Units that must find the disks mounted when they start: the container runtimes and kubelet
/// (seed 000 orders its mount before crio; EKS and GKE before containerd and kubelet).
pub const BEFORE_UNITS: &str = "crio.service containerd.service kubelet.service";

/// The tag that marks fstab lines disktier owns (and may rewrite).
pub const FSTAB_TAG: &str = "# disktier";

/// `systemd-escape --path PATH` (systemd.unit(5), "String Escaping for Inclusion in Unit
/// Names"): slashes become `-`, `/` alone is `-`, and every byte other than ASCII letters,
/// digits, `_` and a non-leading `.` becomes `\xNN`.
pub fn escape_path(p: &Path) -> String {
    let s = p.to_string_lossy();
    let trimmed: Vec<&str> = s.split('/').filter(|c| !c.is_empty()).collect();
    if trimmed.is_empty() {
        return "-".to_string();
    }
    let joined = trimmed.join("/");
    let mut out = String::new();
    for (i, b) in joined.bytes().enumerate() {
        match b {
            b'/' => out.push('-'),
            b'.' if i > 0 => out.push('.'),
            b if b.is_ascii_alphanumeric() || b == b'_' => out.push(b as char),
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// The mount unit name for a mount point.
pub fn mount_unit_name(p: &Path) -> String {
    format!("{}.mount", escape_path(p))
}

/// A mount unit for the filesystem itself.
pub fn fs_unit(what: &str, where_: &Path, fstype: &str, options: &str) -> String {
    format!(
        "# Written by `disktier setup`: local disk(s) at {w}. Re-running setup rewrites it.\n\
         [Unit]\n\
         Description=disktier: local disk(s) at {w}\n\
         Before={BEFORE_UNITS}\n\
         \n\
         [Mount]\n\
         What={what}\n\
         Where={w}\n\
         Type={fstype}\n\
         Options={options},nofail\n\
         \n\
         [Install]\n\
         WantedBy=local-fs.target\n",
        w = where_.display()
    )
}

/// The boot-time unit that runs `disktier setup` again before the mounts: after a stop/start
/// the disks are blank, and only this makes them (and the filesystem UUID the mount units wait
/// for) again. `exec` is the shell-quoted command line.
pub fn boot_unit(exec: &str, mount: &Path, mount_units: &str) -> String {
    format!(
        "# Written by `disktier setup`: re-creates the local disk(s) at {m} after a stop/start.\n\
         [Unit]\n\
         Description=disktier setup: local disk(s) at {m}\n\
         DefaultDependencies=no\n\
         After=local-fs-pre.target systemd-udev-settle.service\n\
         Wants=systemd-udev-settle.service\n\
         Before={mount_units} {BEFORE_UNITS}\n\
         \n\
         [Service]\n\
         Type=oneshot\n\
         RemainAfterExit=yes\n\
         ExecStart={exec}\n\
         TimeoutSec=0\n\
         \n\
         [Install]\n\
         WantedBy=local-fs.target\n",
        m = mount.display()
    )
}

/// The boot unit's name for a mount point.
pub fn boot_unit_name(mount: &Path) -> String {
    format!("disktier-setup-{}.service", escape_path(mount))
}

/// A mount unit binding a directory of the new filesystem over `where_`.
pub fn bind_unit(src: &Path, where_: &Path, fs_unit_name: &str) -> String {
    format!(
        "# Written by `disktier setup`: {w} lives on the local disk(s). Re-running setup rewrites it.\n\
         [Unit]\n\
         Description=disktier: bind {s} on {w}\n\
         Requires={fs_unit_name}\n\
         After={fs_unit_name}\n\
         Before={BEFORE_UNITS}\n\
         \n\
         [Mount]\n\
         What={s}\n\
         Where={w}\n\
         Type=none\n\
         Options=bind,nofail\n\
         \n\
         [Install]\n\
         WantedBy=local-fs.target\n",
        s = src.display(),
        w = where_.display()
    )
}

/// One fstab line (fstab(5)); fsck pass 0: a fresh ephemeral filesystem has nothing to check.
pub fn fstab_line(what: &str, where_: &Path, fstype: &str, options: &str) -> String {
    format!(
        "{what} {} {fstype} {options},nofail 0 0 {FSTAB_TAG}",
        fstab_escape(where_)
    )
}

/// fstab fields escape blanks as octal (`\040`).
fn fstab_escape(p: &Path) -> String {
    p.to_string_lossy()
        .replace('\\', "\\134")
        .replace(' ', "\\040")
        .replace('\t', "\\011")
}

/// The new fstab: `existing` without disktier's old lines, plus `lines`. Errors with the
/// conflicting line when a line disktier did not write already mounts one of the targets.
pub fn merge_fstab(existing: &str, lines: &[String]) -> Result<String, String> {
    let targets: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    let mut out = String::new();
    for l in existing.lines() {
        if l.trim_end().ends_with(FSTAB_TAG) {
            continue;
        }
        let t = l.trim_start();
        if !t.starts_with('#') {
            if let Some(target) = t.split_whitespace().nth(1) {
                if targets.contains(&target) {
                    return Err(l.to_string());
                }
            }
        }
        out.push_str(l);
        out.push('\n');
    }
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_systemd_escape_path() {
        // Expected values from `systemd-escape --path` (systemd 252).
        assert_eq!(
            escape_path(Path::new("/var/lib/containers")),
            "var-lib-containers"
        );
        assert_eq!(escape_path(Path::new("/")), "-");
        assert_eq!(
            escape_path(Path::new("/mnt/k8s-disks/0")),
            "mnt-k8s\\x2ddisks-0"
        );
        assert_eq!(
            escape_path(Path::new("/srv/.hidden/a b")),
            "srv-.hidden-a\\x20b"
        );
        assert_eq!(escape_path(Path::new("/.x")), "\\x2ex");
        assert_eq!(escape_path(Path::new("//data//")), "data");
    }

    #[test]
    fn matches_the_real_systemd_escape() {
        if disktier_cmd::which("systemd-escape").is_none() {
            eprintln!("skipped: no systemd-escape");
            return;
        }
        for p in [
            "/var/lib/containers",
            "/mnt/k8s-disks/0",
            "/srv/.h/a b/ü",
            "/a_b/c.d-e",
            "/.x",
        ] {
            let out = std::process::Command::new("systemd-escape")
                .args(["--path", p])
                .output()
                .unwrap();
            let want = String::from_utf8_lossy(&out.stdout).trim().to_string();
            assert_eq!(escape_path(Path::new(p)), want, "{p}");
        }
    }

    #[test]
    fn fstab_merge_replaces_ours_and_refuses_foreign_lines() {
        let ours = vec![fstab_line(
            "UUID=u",
            Path::new("/data"),
            "xfs",
            "defaults,noatime",
        )];
        let existing =
            "UUID=root / ext4 defaults 0 1\nUUID=old /data xfs defaults,nofail 0 0 # disktier\n";
        let merged = merge_fstab(existing, &ours).unwrap();
        assert_eq!(
            merged,
            "UUID=root / ext4 defaults 0 1\nUUID=u /data xfs defaults,noatime,nofail 0 0 # disktier\n"
        );
        assert_eq!(merge_fstab(&merged, &ours).unwrap(), merged, "idempotent");
        let foreign = "/dev/sdb /data ext4 defaults 0 2\n";
        assert_eq!(
            merge_fstab(foreign, &ours).unwrap_err(),
            "/dev/sdb /data ext4 defaults 0 2"
        );
    }
}
