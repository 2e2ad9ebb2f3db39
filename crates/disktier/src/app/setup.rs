//! Setup and its undo, below the command line: which node is read, the privilege check, the
//! boot binary a systemd unit runs, and whether a setup that found no disk failed. The steps
//! themselves are [`disktier_disks::setup`]'s.

use anyhow::bail;
use disktier_cmd::CommandRunner;
use disktier_disks::setup::undo::{undo as run_undo, BindChoice, UndoReport, UndoRequest};
use disktier_disks::setup::{setup, Persist, Report, SetupRequest};
use disktier_disks::valid::MountPath;
use std::path::{Path, PathBuf};

/// Where the node's state is read: `/`, or a fixture tree (`--sysfs-root`), which describes
/// another node and so is only allowed with a dry run.
fn node_root(sysfs_root: Option<&Path>, dry_run: bool) -> anyhow::Result<PathBuf> {
    let root = sysfs_root.map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    if root != Path::new("/") && !dry_run {
        bail!(
            "--sysfs-root describes another node: its disks are not this machine's, so only --dry-run is allowed with it"
        );
    }
    Ok(root)
}

/// Runs setup as `req` asks, on the node below `sysfs_root` (None: this one). The checks come
/// in this order: the node, every value of the request (so a bad one is named even without
/// root), then root unless it is a dry run. With `--persist systemd` the boot-time unit runs
/// `exe` (this very binary) again. `runner` makes the runner of setup's tools once the checks
/// passed.
pub fn set_up<R: CommandRunner>(
    req: SetupRequest,
    sysfs_root: Option<&Path>,
    exe: Option<PathBuf>,
    runner: impl FnOnce() -> R,
) -> anyhow::Result<Report> {
    let root = node_root(sysfs_root, req.dry_run)?;
    let dry_run = req.dry_run;
    let cfg = with_boot_binary(req, exe).check()?;
    need_root(dry_run, "setup makes filesystems and mounts them")?;
    Ok(setup(&cfg, &root, &runner())?)
}

/// The boot-time unit of `--persist systemd` runs this very binary (`exe`) again; no other
/// persistence names a binary.
fn with_boot_binary(mut req: SetupRequest, exe: Option<PathBuf>) -> SetupRequest {
    if req.persist == Persist::Systemd {
        req.boot_binary = exe;
    }
    req
}

/// Why a finished setup failed: no disk at all, so nothing was set up and the data stays
/// where it is (exit 1, as the rendered boot script fails then, so `disktier setup ... &&
/// start-workload` stops). None when it set up (or found set up) a disk.
pub fn nothing_set_up(r: &Report) -> Option<String> {
    no_disk_note(&r.mount, r.devices.is_empty())
}

fn no_disk_note(mount: &dyn std::fmt::Display, no_disk: bool) -> Option<String> {
    no_disk.then(|| format!("nothing was set up for {mount}: no eligible disk (exit 1)"))
}

/// `setup --undo`'s options, as typed.
#[derive(Debug, Clone)]
pub struct UndoOptions {
    /// The mount point setup made.
    pub mount: PathBuf,
    /// The filesystem label setup used.
    pub label: String,
    /// What to do with the binds' content.
    pub binds: Option<BindChoice>,
    /// Also erase the filesystem signature.
    pub wipe: bool,
    /// Where units, fstab and the journal live.
    pub persist_root: PathBuf,
    /// The mount table to read.
    pub mountinfo: PathBuf,
    /// Print what it would do, change nothing.
    pub dry_run: bool,
    /// The node's fixture tree (`--sysfs-root`): only with a dry run.
    pub sysfs_root: Option<PathBuf>,
}

/// Undoes setup as `o` asks: the node, then the mount point, then root (unless a dry run) are
/// checked in this order before `runner` is made and the undo runs.
pub fn undo<R: CommandRunner>(
    o: UndoOptions,
    runner: impl FnOnce() -> R,
) -> anyhow::Result<UndoReport> {
    node_root(o.sysfs_root.as_deref(), o.dry_run)?;
    let mount = MountPath::parse("--mount", &o.mount.display().to_string())?;
    let mut req = UndoRequest::new(mount);
    req.label = o.label;
    req.binds = o.binds;
    req.wipe = o.wipe;
    // Only the node's own systemd is reloaded: not for units under another persist root.
    req.reload_systemd = disktier_disks::setup::persist::node_systemd(&o.persist_root);
    req.persist_root = o.persist_root;
    req.mountinfo = o.mountinfo;
    req.dry_run = o.dry_run;
    need_root(req.dry_run, "setup --undo unmounts and removes units")?;
    Ok(run_undo(&req, &runner())?)
}

/// Refuses a run that is not a dry run unless we run as root (`what` says what it changes).
fn need_root(dry_run: bool, what: &str) -> anyhow::Result<()> {
    refuse_unless_root(dry_run, is_root(), what)
}

fn refuse_unless_root(dry_run: bool, root: bool, what: &str) -> anyhow::Result<()> {
    if !dry_run && !root {
        bail!("{what}: run it as root, or pass --dry-run to see what it would do");
    }
    Ok(())
}

/// Whether we run as root: /proc/self belongs to the process's effective uid (proc(5)).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_dry_run_goes_without_root() {
        assert!(refuse_unless_root(true, false, "setup").is_ok());
        assert!(refuse_unless_root(false, true, "setup").is_ok());
        assert_eq!(
            refuse_unless_root(false, false, "setup makes filesystems")
                .unwrap_err()
                .to_string(),
            "setup makes filesystems: run it as root, or pass --dry-run to see what it would do"
        );
        let uid0 = std::fs::metadata("/proc/self")
            .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
            .unwrap_or(false);
        assert_eq!(is_root(), uid0);
    }

    #[test]
    fn only_systemd_units_run_the_binary_and_no_disk_fails() {
        let exe = Some(PathBuf::from("/usr/local/bin/disktier"));
        for (persist, want) in [
            (Persist::Systemd, exe.clone()),
            (Persist::Fstab, None),
            (Persist::None, None),
        ] {
            let mut req = SetupRequest::new("/data");
            req.persist = persist;
            assert_eq!(with_boot_binary(req, exe.clone()).boot_binary, want);
        }
        assert_eq!(no_disk_note(&"/data", false), None);
        assert_eq!(
            no_disk_note(&"/data", true).unwrap(),
            "nothing was set up for /data: no eligible disk (exit 1)"
        );
    }

    #[test]
    fn another_node_only_with_a_dry_run() {
        assert_eq!(node_root(None, false).unwrap(), PathBuf::from("/"));
        assert_eq!(
            node_root(Some(Path::new("/")), false).unwrap(),
            PathBuf::from("/")
        );
        let fx = Path::new("/tmp/fixture");
        assert_eq!(node_root(Some(fx), true).unwrap(), fx);
        assert!(node_root(Some(fx), false)
            .unwrap_err()
            .to_string()
            .starts_with("--sysfs-root describes another node"));
    }

    #[test]
    fn the_node_is_checked_before_the_request_and_undo_before_its_mount() {
        let req = SetupRequest::new("relative/not/a/mount");
        let e = set_up(
            req,
            Some(Path::new("/tmp/x")),
            None,
            || -> disktier_cmd::RealRunner { panic!("no runner before the checks") },
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("--sysfs-root"), "{e}");
        let o = UndoOptions {
            mount: "relative".into(),
            label: "disktier".into(),
            binds: None,
            wipe: false,
            persist_root: "/".into(),
            mountinfo: "/proc/self/mountinfo".into(),
            dry_run: false,
            sysfs_root: Some("/tmp/x".into()),
        };
        let e = undo(o, || -> disktier_cmd::RealRunner { panic!("no runner") }).unwrap_err();
        assert!(e.to_string().starts_with("--sysfs-root"), "{e}");
    }
}
