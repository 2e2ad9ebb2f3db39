//! Making the mounts survive a reboot: systemd mount units (named as `systemd-escape --path`
//! names them) or fstab lines, by UUID, `nofail`, ordered before the container runtime and
//! kubelet (docs/sources.md [ocp-container-storage-disk], [eks-setup-local-disks]).

pub use super::fstab::{
    fstab_line, fstab_path, merge_fstab, persisted_target, setup_line_for, FSTAB_TAG,
};
use super::SetupError;
use crate::valid::{unit_escape_path, MountPath};
use disktier_atomicfile::{Mode, Staged};
use std::path::Path;

/// How every unit setup writes starts: what marks it as setup's, to rewrite or (`--undo`) remove.
pub const UNIT_HEADER: &str = "# Written by `disktier setup`";

/// Units that must find the disks mounted when they start: the container runtimes and kubelet (the
/// OpenShift instance-disk recipe [recipe-ocp-instance-disk] orders its mount before crio; EKS and
/// GKE before containerd and kubelet).
pub const BEFORE_UNITS: &str = "crio.service containerd.service kubelet.service";

/// Whether units written under `root` are the running node's and systemd manages it: the root
/// is `/` and systemd is the running manager (`/run/systemd/system` exists, as sd_booted(3)
/// tests). Only then do setup and its undo run `systemctl daemon-reload`.
pub fn node_systemd(root: &Path) -> bool {
    root == Path::new("/") && Path::new("/run/systemd/system").exists()
}

/// The only name systemd accepts for the mount unit of a mount point (`systemd-escape --path`,
/// see [`crate::valid::unit_escape_path`]).
pub fn mount_unit_name(p: &str) -> String {
    format!("{}.mount", unit_escape_path(p))
}

/// The `[Service]` and `[Install]` sections of a unit that runs `exec` once, stays active, has
/// no time limit and is wanted by `wanted_by` (systemd.service(5), Type=oneshot).
pub(crate) fn oneshot_service(exec: &str, wanted_by: &str) -> String {
    format!(
        "[Service]\n\
         Type=oneshot\n\
         RemainAfterExit=yes\n\
         ExecStart={exec}\n\
         TimeoutSec=0\n\
         \n\
         [Install]\n\
         WantedBy={wanted_by}\n"
    )
}

/// One argument of a unit's `ExecStart=` (systemd.service(5), "Command lines"): plain when it
/// holds only characters systemd gives no meaning, else in double quotes with `\`, `"`
/// escaped, `%` doubled (specifiers) and `$` doubled (variables).
pub fn exec_arg(a: &str) -> String {
    if !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/_.:,=@+-".contains(c))
    {
        return a.to_string();
    }
    let mut out = String::from("\"");
    for c in a.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            '$' => out.push_str("$$"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A mount unit for the filesystem itself.
pub fn fs_unit(what: &str, where_: &MountPath, fstype: &str, options: &str) -> String {
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
        w = where_
    )
}

/// The boot-time unit that runs `disktier setup` again before the mounts: after a stop/start
/// the disks are blank, and only this makes them (and the filesystem UUID the mount units wait
/// for) again. `exec` is the shell-quoted command line.
/// `needs` is what it needs mounted first ([`boot_unit_needs`]).
pub fn boot_unit(exec: &str, mount: &MountPath, mount_units: &str, needs: &str) -> String {
    format!(
        "# Written by `disktier setup`: re-creates the local disk(s) at {m} after a stop/start.\n\
         [Unit]\n\
         Description=disktier setup: local disk(s) at {m}\n\
         DefaultDependencies=no\n\
         After=local-fs-pre.target systemd-udev-settle.service\n\
         Wants=systemd-udev-settle.service\n\
         Before={mount_units} {BEFORE_UNITS}\n\
         RequiresMountsFor={needs}\n\
         \n\
         {service}",
        service = oneshot_service(exec, "local-fs.target"),
        m = mount
    )
}

/// Where setup keeps its lock and the undo journal on the node ([`super::lock`],
/// [`super::journal`]).
const STATE_DIR: &str = "/var/lib/disktier";

/// What a boot-time unit running `binary` (`disktier setup`, or `render openshift
/// --use-binary`'s) needs mounted before it starts, as `RequiresMountsFor=` takes it (each path
/// quoted as `ExecStart=` quotes): the directories the binary, the mount point and each bind
/// directory lie in, and setup's state directory. The unit is ordered before local-fs.target,
/// which is what mounts a separate /var (or /var/lib, /usr/local): without these it ran while
/// /var was not mounted yet, made its mount and copied the bind directories on the root
/// filesystem underneath, and /var then hid them (found by QA). A bind directory's parent that
/// is itself a bind (or below one) is left out: that bind is mounted after this unit.
pub fn boot_unit_needs(binary: &str, mount: &MountPath, binds: &[MountPath]) -> String {
    let bin_dir = match binary.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &binary[..i],
    };
    let mut dirs: Vec<&str> = vec![bin_dir, mount.parent_str(), STATE_DIR];
    for b in binds {
        let p = b.parent_str();
        let on_a_bind = binds
            .iter()
            .any(|o| p == o.as_str() || p.starts_with(&format!("{o}/")));
        if !on_a_bind {
            dirs.push(p);
        }
    }
    let mut out: Vec<String> = Vec::new();
    for d in dirs.into_iter().filter(|d| *d != "/") {
        let d = exec_arg(d);
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out.join(" ")
}

/// The boot unit's name for a mount point.
pub fn boot_unit_name(mount: &MountPath) -> String {
    format!("disktier-setup-{}.service", unit_escape_path(mount))
}

/// A mount unit binding a directory of the new filesystem over `where_`.
pub fn bind_unit(src: &MountPath, where_: &MountPath, fs_unit_name: &str) -> String {
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
        s = src,
        w = where_
    )
}

/// FNV-1a 64 of a file's content (of nothing when it cannot be read): what the planner saw,
/// compared again right before the file is replaced.
pub fn content_hash(path: &Path) -> u64 {
    let bytes = std::fs::read(path).unwrap_or_default();
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// What is at `path` now, if anything, when it is a file [`write_atomic`] may replace: a symbolic
/// link or anything but a regular file is refused. The planner asks this before it plans a write
/// (so a run is refused before anything is changed), `write_atomic` again right before writing.
pub fn replaceable(path: &Path) -> Result<Option<std::fs::Metadata>, SetupError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(SetupError::Config(format!(
            "{} is a symbolic link: disktier replaces the file atomically and does not follow links; write the file's real path or replace the link with a file",
            path.display()
        ))),
        Ok(m) if !m.is_file() => Err(SetupError::Config(format!(
            "{} is not a regular file: remove it or choose another --root",
            path.display()
        ))),
        Ok(m) => writable(path).map(|()| Some(m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => writable(path).map(|()| None),
        Err(e) => Err(SetupError::Io {
            path: path.to_path_buf(),
            source: e,
        }),
    }
}

/// Refuses `path` when the nearest directory that exists above it is on a read-only filesystem
/// (a read-only /etc): the write failed after mkfs and mount had run (found by QA), leaving a
/// mount that the next boot forgets.
fn writable(path: &Path) -> Result<(), SetupError> {
    let Some(dir) = path
        .ancestors()
        .skip(1)
        .find(|a| a.symlink_metadata().is_ok())
    else {
        return Ok(());
    };
    match rustix::fs::statvfs(dir) {
        Ok(st) if st.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY) => {
            Err(SetupError::Config(format!(
                "{} cannot be written: {} is on a read-only filesystem; remount it read-write, or leave --persist out",
                path.display(),
                dir.display()
            )))
        }
        _ => Ok(()),
    }
}

/// Replaces `path` with `contents` atomically ([`disktier_atomicfile`]): a temporary file in the
/// same directory, written, given the old file's mode, owner and SELinux label (the
/// `security.selinux` extended attribute), synced, then renamed over it; the old content is
/// kept as `PATH.disktier.bak`, itself replaced atomically, so a full disk leaves the previous
/// backup rather than none. A crash leaves either the old or the new file, never half of one. A
/// symbolic link is refused (renaming over it would replace the link, not its target).
pub fn write_atomic(path: &Path, contents: &str) -> Result<(), SetupError> {
    use std::os::unix::fs::MetadataExt;
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |e| SetupError::Io { path: p, source: e }
    };
    let atomic = |e: disktier_atomicfile::AtomicError| {
        let p = match &e {
            disktier_atomicfile::AtomicError::Create { dir, .. } => dir.clone(),
            disktier_atomicfile::AtomicError::Write { path, .. } => path.clone(),
        };
        SetupError::Io {
            path: p,
            source: e.into_io(),
        }
    };
    let dir = path.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let old = replaceable(path)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(m) = &old {
        let bak = dir.join(format!("{name}.disktier.bak"));
        let prev = std::fs::read(path).map_err(io(path))?;
        if prev != contents.as_bytes() {
            // The backup gets the old file's mode too: fstab may be readable by root only.
            disktier_atomicfile::replace(&bak, &prev, Mode::Exact(m.mode() & 0o7777))
                .map_err(atomic)?;
        }
    }
    let mut staged =
        Staged::with(path, contents.as_bytes(), Mode::KeepOr(0o644)).map_err(atomic)?;
    if let Some(m) = &old {
        // Owner only root can set, and setup runs as root (a test's temp dir keeps the
        // caller's owner anyway).
        let f = staged.file();
        if std::os::unix::fs::fchown(&*f, Some(m.uid()), Some(m.gid())).is_err() {
            let md = f.metadata().map_err(io(path))?;
            if (m.uid(), m.gid()) != (md.uid(), md.gid()) {
                return Err(SetupError::Config(format!(
                    "cannot give {} its owner {}:{}: run setup as root",
                    path.display(),
                    m.uid(),
                    m.gid()
                )));
            }
        }
        copy_selinux_label(path, f).map_err(io(path))?;
    }
    // Dropped on an error above, the temporary file is removed.
    staged.commit().map_err(atomic)
}

/// Copies the `security.selinux` extended attribute of `from` to `to`, when `from` has one
/// (no SELinux, or a filesystem without xattrs: nothing to copy).
fn copy_selinux_label(from: &Path, to: &std::fs::File) -> std::io::Result<()> {
    use rustix::io::Errno;
    let name = "security.selinux";
    let mut buf = vec![0u8; 4096];
    let n = match rustix::fs::lgetxattr(from, name, &mut buf[..]) {
        Ok(n) => n,
        Err(Errno::NODATA | Errno::NOTSUP) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    rustix::fs::fsetxattr(to, name, &buf[..n], rustix::fs::XattrFlags::empty())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mp(s: &str) -> MountPath {
        MountPath::parse("--mount", s).unwrap()
    }

    #[test]
    fn escapes_like_systemd_escape_path() {
        // Expected values from `systemd-escape --path` (systemd 252).
        let escape_path = unit_escape_path;
        assert_eq!(escape_path("/var/lib/containers"), "var-lib-containers");
        assert_eq!(escape_path("/"), "-");
        assert_eq!(escape_path("/mnt/k8s-disks/0"), "mnt-k8s\\x2ddisks-0");
        assert_eq!(escape_path("/srv/.hidden/a b"), "srv-.hidden-a\\x20b");
        assert_eq!(escape_path("/.x"), "\\x2ex");
        assert_eq!(escape_path("//data//"), "data");
        assert_eq!(mount_unit_name(&mp("/a:b")), "a:b.mount");
    }

    #[test]
    fn the_boot_unit_needs_the_directories_it_works_in_mounted_first() {
        let binds = [
            mp("/var/lib/kubelet"),
            mp("/var/lib/kubelet/pods"),
            mp("/srv/a b/c"),
        ];
        assert_eq!(
            boot_unit_needs("/usr/local/bin/disktier", &mp("/mnt/disks/ssd"), &binds),
            "/usr/local/bin /mnt/disks /var/lib/disktier /var/lib \"/srv/a b\""
        );
        assert_eq!(
            boot_unit_needs("/usr/local/bin/disktier", &mp("/data"), &[]),
            "/usr/local/bin /var/lib/disktier"
        );
        let unit = boot_unit(
            "x",
            &mp("/data"),
            "data.mount",
            "/usr/local/bin /var/lib/disktier",
        );
        assert!(
            unit.contains("\nRequiresMountsFor=/usr/local/bin /var/lib/disktier\n"),
            "{unit}"
        );
    }

    #[test]
    fn exec_args_are_quoted_for_systemd() {
        assert_eq!(
            exec_arg("/usr/local/bin/disktier"),
            "/usr/local/bin/disktier"
        );
        assert_eq!(exec_arg("/mnt/a b"), "\"/mnt/a b\"");
        assert_eq!(exec_arg("50%$x\"\\"), "\"50%%$$x\\\"\\\\\"");
        assert_eq!(exec_arg(""), "\"\"");
    }

    #[test]
    fn atomic_write_keeps_mode_and_a_backup() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let fstab = t.path().join("etc/fstab");
        std::fs::create_dir_all(fstab.parent().unwrap()).unwrap();
        std::fs::write(&fstab, "old\n").unwrap();
        std::fs::set_permissions(&fstab, std::fs::Permissions::from_mode(0o600)).unwrap();
        let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&fstab).unwrap());
        write_atomic(&fstab, "new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&fstab).unwrap(), "new\n");
        let m = std::fs::metadata(&fstab).unwrap();
        assert_eq!(m.permissions().mode() & 0o7777, 0o600);
        assert_ne!(
            std::os::unix::fs::MetadataExt::ino(&m),
            ino,
            "replaced, not rewritten in place"
        );
        assert_eq!(
            std::fs::read_to_string(t.path().join("etc/fstab.disktier.bak")).unwrap(),
            "old\n"
        );
        let left: Vec<_> = std::fs::read_dir(t.path().join("etc"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left.len(), 2, "no temporary file left: {left:?}");
        // A symlink is refused, and its target is untouched.
        let link = t.path().join("etc/link");
        std::os::unix::fs::symlink(&fstab, &link).unwrap();
        let e = write_atomic(&link, "x").unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&fstab).unwrap(), "new\n");
    }

    /// Left item (session 25): the backup was removed before the new one was written, so a
    /// full filesystem lost the previous backup as well as failing. Now both files are
    /// replaced whole or not at all. Needs root (a 64 KiB tmpfs); skipped otherwise.
    #[test]
    fn a_full_filesystem_keeps_the_file_and_its_previous_backup() {
        let t = tempfile::tempdir().unwrap();
        let etc = t.path().join("etc");
        std::fs::create_dir(&etc).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "disktier-test"])
            .arg(&etc)
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: cannot mount a tmpfs (not root)");
            return;
        }
        struct Unmount(std::path::PathBuf);
        impl Drop for Unmount {
            fn drop(&mut self) {
                let _ = std::process::Command::new("umount").arg(&self.0).status();
            }
        }
        let _unmount = Unmount(etc.clone());
        let fstab = etc.join("fstab");
        std::fs::write(&fstab, "first\n").unwrap();
        write_atomic(&fstab, "second\n").unwrap();
        let bak = etc.join("fstab.disktier.bak");
        assert_eq!(std::fs::read_to_string(&bak).unwrap(), "first\n");
        // Fill the filesystem: what is left is less than a page.
        let mut filler = std::fs::File::create(etc.join("filler")).unwrap();
        let block = vec![b'x'; 4096];
        while std::io::Write::write_all(&mut filler, &block).is_ok() {}
        let big = "third\n".repeat(2000);
        assert!(
            write_atomic(&fstab, &big).is_err(),
            "the filesystem is full"
        );
        assert_eq!(std::fs::read_to_string(&fstab).unwrap(), "second\n");
        assert_eq!(
            std::fs::read_to_string(&bak).unwrap(),
            "first\n",
            "the previous backup is kept"
        );
        let mut left: Vec<_> = std::fs::read_dir(&etc)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["filler", "fstab", "fstab.disktier.bak"]);
    }

    #[test]
    fn atomic_write_copies_the_selinux_label_when_the_filesystem_keeps_one() {
        // Setting security.selinux needs root or SELinux; where it cannot be set, there is
        // nothing to keep and the test says so.
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("fstab");
        std::fs::write(&f, "old\n").unwrap();
        let label = b"system_u:object_r:etc_t:s0\0";
        let name = "security.selinux";
        if let Err(e) = rustix::fs::setxattr(&f, name, label, rustix::fs::XattrFlags::empty()) {
            eprintln!(
                "skipped: cannot set security.selinux here ({})",
                std::io::Error::from(e)
            );
            return;
        }
        write_atomic(&f, "new\n").unwrap();
        let mut buf = [0u8; 64];
        let n = rustix::fs::getxattr(&f, name, &mut buf[..]).unwrap();
        assert_eq!(&buf[..n], label);
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
            "/a:b/c@d+e",
        ] {
            let out = std::process::Command::new("systemd-escape")
                .args(["--path", p])
                .output()
                .unwrap();
            let want = String::from_utf8_lossy(&out.stdout).trim().to_string();
            assert_eq!(unit_escape_path(p), want, "{p}");
        }
    }
}
