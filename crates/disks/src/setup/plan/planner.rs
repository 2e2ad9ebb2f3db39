//! The steps for each part of a round: one disk, separate disks, a RAID0 array, mounting,
//! ownership and bind mounts. [`persist`](super::persist_steps) adds the steps that make the
//! result survive a reboot; [`checks`](super::checks) holds the checks a disk holding disktier's
//! filesystem passes before it is used again.

use super::state::{derived_uuid, owner_ids};
use super::types::{DevState, SetupPlan};
use crate::discover::{Disk, MountEntry, Node};
use crate::setup::config::{FsType, SetupConfig};
use crate::setup::kernel::{is_quota_option, Kernel};
use crate::setup::live::{self, Flags};
use crate::setup::step::Step;
use crate::setup::SetupError;
use crate::valid::MountPath;
use std::path::{Path, PathBuf};

/// The topmost mount at `target`, if any (mountinfo lists mounts in order; the last one on a
/// path is the one visible there).
pub(super) fn top_mount<'a>(
    mounts: &'a [MountEntry],
    target: &MountPath,
) -> Option<&'a MountEntry> {
    mounts
        .iter()
        .rev()
        .find(|m| m.mount_point == target.as_str())
}

/// The kernel name a `--devices` entry (by-id path, `/dev/NAME`, or a symlink to one) names.
pub fn given_name(root: &Path, given: &str) -> Option<String> {
    let file_name = |p: PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned());
    if root == Path::new("/") {
        file_name(std::fs::canonicalize(given).ok()?)
    } else if let Some(id) = given.strip_prefix("/dev/disk/by-id/") {
        file_name(std::fs::read_link(root.join("dev/disk/by-id").join(id)).ok()?)
    } else {
        given.strip_prefix("/dev/").map(str::to_string)
    }
}

/// Resolves a `--devices` entry to a disk.
pub(super) fn resolve<'a>(
    node: &'a Node,
    root: &Path,
    given: &str,
) -> Result<&'a Disk, SetupError> {
    let not_found = || SetupError::NoSuchDevice {
        device: given.to_string(),
    };
    let name = given_name(root, given).ok_or_else(not_found)?;
    if let Some(d) = node.disks.iter().find(|d| d.name == name) {
        return Ok(d);
    }
    if let Some(d) = node
        .disks
        .iter()
        .find(|d| d.partitions.iter().any(|p| p.name == name))
    {
        return Err(SetupError::Partition {
            device: given.to_string(),
            disk: d.path.clone(),
        });
    }
    // Discovery leaves out a disk of size 0 (an empty drive, an unbound loop device or one
    // over an empty file): it exists, so "no such block device" misled (found by QA).
    let size = std::fs::read_to_string(root.join("sys/block").join(&name).join("size"));
    if size.is_ok_and(|s| s.trim() == "0") {
        return Err(SetupError::EmptyDevice {
            device: given.to_string(),
        });
    }
    Err(not_found())
}

/// Where persisted files go.
pub(super) fn units_dir(cfg: &SetupConfig) -> PathBuf {
    cfg.persist_root.join("etc/systemd/system")
}

pub(super) struct Planner<'a> {
    pub(super) cfg: &'a SetupConfig,
    pub(super) node: &'a Node,
    pub(super) kernel: &'a Kernel,
    pub(super) root: &'a Path,
    pub(super) plan: SetupPlan,
    /// Mounts made or found: (what for persistence, target, fstype, options).
    pub(super) persisted: Vec<(String, MountPath, String)>,
    pub(super) binds: Vec<(MountPath, MountPath)>,
    pub(super) mounting: bool,
}

/// The chosen disks in state `f`, for messages.
pub(super) fn names(chosen: &[(&Disk, DevState)], f: impl Fn(&DevState) -> bool) -> String {
    chosen
        .iter()
        .filter(|(_, s)| f(s))
        .map(|(d, _)| d.best_path().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Planner<'_> {
    pub(super) fn push(&mut self, s: Step) {
        self.plan.steps.push(s);
    }

    /// A remount of `target` to the requested flags, with the note that says why (`what`: "M is
    /// mounted with", "the bind on B has").
    fn remount(&mut self, what: &str, target: &MountPath, r: live::Remount, bind: bool) {
        self.plan.notes.push(format!(
            "{what} other flags than asked for: {}; it is remounted",
            r.differs.join(", ")
        ));
        self.push(Step::Remount {
            target: target.clone(),
            options: r.options,
            bind,
        });
    }

    pub(super) fn single(
        &mut self,
        d: &Disk,
        s: &DevState,
        target: &MountPath,
        label: &str,
    ) -> Result<(), SetupError> {
        match s {
            DevState::Blank => self.make_fs(d.best_path().to_string(), target, label, None),
            DevState::OurFs {
                fstype,
                uuid,
                label: fs_label,
                ..
            } => {
                self.check_mounted_only_at(d, target)?;
                self.check_made_for(d.best_path(), fs_label, uuid.as_deref(), target, label)?;
                // xfs and ext4 always carry a UUID; blkid not reporting one means a damaged
                // superblock, which is not ours to repair.
                let what = uuid.clone().ok_or_else(|| SetupError::Refused {
                    device: d.best_path().to_string(),
                    reasons: vec![format!(
                        "its {fstype} filesystem labelled {:?} reports no UUID (damaged?): check it with xfs_repair -n / e2fsck -n",
                        self.cfg.label.as_str()
                    )],
                })?;
                self.check_fs(d.best_path(), fstype, target)?;
                let fstype = fstype.clone();
                self.mount_fs(target, &what, &fstype, Some(&d.maj_min))
            }
            _ => unreachable!("members and refused disks are not used directly"),
        }
    }

    /// A new filesystem on `device` (striped over `stripe_members` disks, if any), mounted at
    /// `target`.
    fn make_fs(
        &mut self,
        device: String,
        target: &MountPath,
        label: &str,
        stripe_members: Option<usize>,
    ) -> Result<(), SetupError> {
        let uuid = derived_uuid(label, target.as_path());
        self.push(Step::Mkfs {
            device,
            fs: self.cfg.fs,
            label: label.to_string(),
            uuid: uuid.clone(),
            stripe_members,
            ext4_quota: self.ext4_quota(),
        });
        self.mount_fs(target, &uuid, self.cfg.fs.as_str(), None)
    }

    /// Refuses to mount over a directory that holds anything (its content would be hidden until
    /// the mount goes; found by QA), unless `--allow-nonempty`. Only on the node itself: a
    /// fixture tree's mount point is not this machine's directory.
    fn check_empty(&mut self, target: &MountPath) -> Result<(), SetupError> {
        if self.root != Path::new("/") {
            return Ok(());
        }
        let Ok(rd) = std::fs::read_dir(target.as_path()) else {
            // Missing: `mkdir -p` makes it (a file there was refused before planning).
            return Ok(());
        };
        // Enough to name a few and say there are more, without reading all of /usr.
        const READ: usize = 1000;
        let mut names: Vec<String> = rd
            .take(READ)
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if names.is_empty() {
            return Ok(());
        }
        names.sort();
        let count = if names.len() == READ {
            format!("{READ} or more entries")
        } else if names.len() == 1 {
            "1 entry".to_string()
        } else {
            format!("{} entries", names.len())
        };
        let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
        let more = if names.len() > 3 { ", ..." } else { "" };
        if self.cfg.allow_nonempty {
            self.plan.notes.push(format!(
                "warning: {target} holds {count} ({}{more}): hidden under the mount until it is unmounted (--allow-nonempty)",
                shown.join(", ")
            ));
            return Ok(());
        }
        Err(SetupError::Config(format!(
            "{target} is not empty: it holds {count} ({}{more}), which mounting over it would hide; choose an empty or new directory, move the content away, or pass --allow-nonempty to mount over it anyway",
            shown.join(", ")
        )))
    }

    /// A filesystem already mounted at `target`: the flags that differ from the request are
    /// remounted; a filesystem option it lacks is refused ([`live::compare`]).
    fn converge_options(&mut self, target: &MountPath, m: &MountEntry) -> Result<(), SetupError> {
        let c = live::compare(&self.cfg.options, m, target.as_str());
        if let Some(why) = c.refuse {
            return Err(SetupError::Config(why));
        }
        for o in c.unconfirmed {
            self.plan.notes.push(format!(
                "warning: {o} is not among the options the kernel lists for {target} ({} {}): it may be one the kernel applies without listing it; if it did not take effect, unmount {target} and re-run setup",
                m.options, m.super_options
            ));
        }
        if let Some(r) = c.remount {
            self.remount(&format!("{target} is mounted with"), target, r, false);
        }
        Ok(())
    }

    pub(super) fn ext4_quota(&self) -> bool {
        self.cfg.fs == FsType::Ext4 && self.cfg.options.iter().any(is_quota_option)
    }

    /// Mounts the filesystem with `uuid` at `target` unless it already is, then owner, mode,
    /// SELinux labels. `maj_min`: the device now holding it, when it exists already.
    pub(super) fn mount_fs(
        &mut self,
        target: &MountPath,
        uuid: &str,
        fstype: &str,
        maj_min: Option<&str>,
    ) -> Result<(), SetupError> {
        let what = format!("UUID={uuid}");
        self.persisted.push((
            format!("/dev/disk/by-uuid/{uuid}"),
            target.clone(),
            fstype.to_string(),
        ));
        match top_mount(&self.node.mounts, target) {
            Some(m) if Some(m.maj_min.as_str()) == maj_min && m.root == "/" => {
                let m = m.clone();
                self.converge_options(target, &m)?;
                self.owner_mode_if_changed(target);
                Ok(())
            }
            Some(m) => Err(SetupError::TargetBusy {
                target: target.as_path().to_path_buf(),
                source_dev: m.source.clone(),
                fstype: m.fstype.clone(),
            }),
            _ => {
                self.check_empty(target)?;
                self.mounting = true;
                self.push(Step::Mkdir {
                    path: target.clone(),
                });
                self.push(Step::Mount {
                    what,
                    target: target.clone(),
                    fstype: fstype.to_string(),
                    options: self.cfg.options_string(),
                });
                if let Some(o) = &self.cfg.owner {
                    self.push(Step::Chown {
                        path: target.clone(),
                        owner: o.clone(),
                    });
                }
                if let Some(m) = self.cfg.mode {
                    self.push(Step::Chmod {
                        path: target.clone(),
                        mode: m,
                    });
                }
                if self.kernel.selinux && Flags::requested(&self.cfg.options).read_only() {
                    // restorecon writes labels: it fails on a read-only mount.
                    self.plan.notes.push(format!(
                        "{target} is mounted read-only: its SELinux labels are not restored (mount it with a context= option instead)"
                    ));
                } else if self.kernel.selinux {
                    self.push(Step::Restorecon {
                        path: target.clone(),
                    });
                }
                Ok(())
            }
        }
    }

    /// For a filesystem already mounted: chown/chmod only when they differ.
    pub(super) fn owner_mode_if_changed(&mut self, target: &MountPath) {
        use std::os::unix::fs::MetadataExt;
        let meta = if self.root == Path::new("/") {
            std::fs::metadata(target.as_path()).ok()
        } else {
            None
        };
        if let Some(o) = self.cfg.owner.clone() {
            // `chown USER` leaves the group as it is: only `USER:GROUP` is compared with the
            // group (found by QA: `--owner nobody` was chowned again, "done", at every re-run).
            let same = meta.as_ref().is_some_and(|m| {
                owner_ids(self.root, &o.to_string()).is_some_and(|(uid, gid)| {
                    uid == m.uid() && (o.group.is_none() || gid == m.gid())
                })
            });
            if !same {
                self.push(Step::Chown {
                    path: target.clone(),
                    owner: o,
                });
            }
        }
        if let Some(mode) = self.cfg.mode {
            if meta.as_ref().map(|m| m.mode() & 0o7777) != Some(mode.bits()) {
                self.push(Step::Chmod {
                    path: target.clone(),
                    mode,
                });
            }
        }
    }

    /// `--bind`: copy each directory's content onto the filesystem, then bind it back, parent
    /// before child. `maj_min`: the device holding the filesystem now (None: made this run).
    pub(super) fn bind_dirs(&mut self, maj_min: Option<String>) -> Result<(), SetupError> {
        let target = self.cfg.mount.clone();
        let fresh = self
            .plan
            .steps
            .iter()
            .any(|s| matches!(s, Step::Mkfs { .. }));
        let mounted_now = !self.mounting;
        for dir in self.cfg.bind.clone() {
            let src = target.join_below(&dir);
            self.binds.push((src.clone(), dir.clone()));
            let want_root = dir.to_string();
            match top_mount(&self.node.mounts, &dir) {
                Some(m) if Some(&m.maj_min) == maj_min.as_ref() && m.root == want_root => {
                    // In place: only its per-mount flags may differ from the request.
                    if let Some(r) = live::compare_bind(&self.cfg.options, m) {
                        self.remount(&format!("the bind on {dir} has"), &dir, r, true);
                    }
                    continue;
                }
                Some(m) => {
                    return Err(SetupError::TargetBusy {
                        target: dir.as_path().to_path_buf(),
                        source_dev: m.source.clone(),
                        fstype: m.fstype.clone(),
                    })
                }
                None => {}
            }
            self.refuse_mounts_below(&dir)?;
            self.mounting = true;
            let ancestor_bound = self.cfg.bind.iter().any(|b| b != &dir && dir.is_below(b));
            if ancestor_bound {
                // Its content came with the ancestor's copy.
                self.push(Step::Mkdir { path: src.clone() });
            } else if dir.as_path().is_dir() {
                let skip = mounted_now && !fresh && src.as_path().exists();
                if !skip {
                    self.push(Step::CopyIn {
                        src: dir.clone(),
                        dest: src.clone(),
                        staging: target.join_name(&format!(
                            ".disktier-copy-{}",
                            crate::valid::file_slug(&dir)
                        )),
                        conditional: !fresh,
                    });
                }
            } else {
                self.push(Step::Mkdir { path: src.clone() });
                self.push(Step::Mkdir { path: dir.clone() });
            }
            self.push(Step::BindMount {
                src,
                target: dir.clone(),
            });
            if self.kernel.selinux {
                self.push(Step::Restorecon { path: dir.clone() });
            }
        }
        Ok(())
    }

    /// Refuses to bind over `dir` while something is mounted below it (a running kubelet's pod
    /// volumes, a runtime's overlays): `cp -a` crosses into each and copied what it holds onto
    /// the disk, and the bind then hid them from everything started afterwards (found by QA).
    fn refuse_mounts_below(&self, dir: &MountPath) -> Result<(), SetupError> {
        let d = dir.as_str();
        let mut below: Vec<&str> = self
            .node
            .mounts
            .iter()
            .map(|m| m.mount_point.as_str())
            .filter(|p| p.len() > d.len() && p.starts_with(d) && p.as_bytes()[d.len()] == b'/')
            .collect();
        below.sort_unstable();
        below.dedup();
        if below.is_empty() {
            return Ok(());
        }
        let more = if below.len() > 3 { ", ..." } else { "" };
        Err(SetupError::Config(format!(
            "--bind {dir} has {} mounted below it ({}{more}): setup would copy what they hold onto the disk and hide them under the bind; unmount them (stop what mounted them first: kubelet, the container runtime) and re-run setup",
            if below.len() == 1 { "1 filesystem".to_string() } else { format!("{} filesystems", below.len()) },
            below[..below.len().min(3)].join(", ")
        )))
    }

    pub(super) fn separate(&mut self, chosen: &[(&Disk, DevState)]) -> Result<(), SetupError> {
        // Disks keep the index in their label; blank ones take the lowest free indices, in
        // stable-path order so the numbering does not follow kernel names.
        let mut used: Vec<usize> = chosen
            .iter()
            .filter_map(|(_, s)| match s {
                DevState::OurFs { index, .. } => *index,
                _ => None,
            })
            .collect();
        let mut sorted: Vec<&(&Disk, DevState)> = chosen.iter().collect();
        sorted.sort_by(|a, b| a.0.best_path().cmp(b.0.best_path()));
        for (d, s) in sorted {
            let idx = match s {
                DevState::OurFs { index: Some(i), .. } => *i,
                DevState::OurFs { label, .. } => {
                    return Err(SetupError::Config(format!(
                        "{} holds disktier's single-disk filesystem (label {label}), not a LABEL-N one: drop --layout separate or pass --devices without it",
                        d.best_path()
                    )))
                }
                _ => {
                    let i = (0..).find(|i| !used.contains(i)).unwrap_or(0);
                    used.push(i);
                    i
                }
            };
            let target = self.cfg.mount.join_index(idx);
            let label = format!("{}-{idx}", self.cfg.label);
            self.single(d, s, &target, &label)?;
        }
        Ok(())
    }

    pub(super) fn raid(
        &mut self,
        chosen: &[(&Disk, DevState)],
        has_program: &dyn Fn(&str) -> bool,
    ) -> Result<(), SetupError> {
        let label = self.cfg.label.to_string();
        let md_path = format!("/dev/md/{label}");
        let members: Vec<&Disk> = chosen
            .iter()
            .filter(|(_, s)| matches!(s, DevState::OurMember { .. }))
            .map(|(d, _)| *d)
            .collect();
        let blanks: Vec<&Disk> = chosen
            .iter()
            .filter(|(_, s)| matches!(s, DevState::Blank))
            .map(|(d, _)| *d)
            .collect();
        let holder = chosen.iter().find_map(|(_, s)| match s {
            DevState::OurMember { holder: Some(h) } => Some(h.clone()),
            _ => None,
        });
        let need_md = holder.is_none();
        if need_md && !self.kernel.md {
            return Err(SetupError::NoMd {
                disks: chosen.len(),
            });
        }
        if need_md && !has_program("mdadm") {
            return Err(SetupError::Config(
                "mdadm was not found: install it (Debian/RHEL package: mdadm), or use --layout separate".into(),
            ));
        }
        if !members.is_empty() {
            if !blanks.is_empty() {
                self.plan.notes.push(format!(
                    "{} not added to the existing array {md_path}: a RAID0 is not grown automatically",
                    blanks.iter().map(|d| d.best_path()).collect::<Vec<_>>().join(", ")
                ));
            }
            let Some(h) = holder else {
                self.push(Step::AssembleRaid {
                    device: md_path,
                    members: members.iter().map(|d| d.best_path().to_string()).collect(),
                });
                self.plan.notes.push(
                    "after assembling, setup reads the array again and plans the rest".into(),
                );
                return Ok(());
            };
            // The array runs: what does it hold?
            let md = self
                .node
                .disks
                .iter()
                .find(|d| d.name == h)
                .ok_or_else(|| {
                    SetupError::Config(format!(
                        "array {h} over {} is not in /sys/block: re-run setup",
                        members[0].best_path()
                    ))
                })?;
            let dev = format!("/dev/{h}");
            match (md.signature.fstype.as_deref(), md.signature.label.as_deref()) {
                (None, _) if md.signature.pttype.is_none() => {
                    let target = self.cfg.mount.clone();
                    self.make_fs(dev, &target, &label, Some(members.len()))?;
                    self.bind_dirs(None)
                }
                (Some(fs @ ("xfs" | "ext4")), Some(l)) if l == label => {
                    let uuid = md.signature.uuid.clone().unwrap_or_default();
                    let target = self.cfg.mount.clone();
                    self.check_mounted_only_at(md, &target)?;
                    self.check_made_for(&dev, l, Some(&uuid), &target, &label)?;
                    self.check_fs(&dev, fs, &target)?;
                    let fs = fs.to_string();
                    self.mount_fs(&target, &uuid, &fs, Some(&md.maj_min))?;
                    self.bind_dirs(Some(md.maj_min.clone()))
                }
                _ => Err(SetupError::Refused {
                    device: dev,
                    reasons: vec![format!(
                        "disktier's array holds something else ({}): wipe it yourself if you mean it",
                        md.signature
                            .fstype
                            .clone()
                            .or(md.signature.pttype.clone())
                            .unwrap_or_default()
                    )],
                }),
            }
        } else {
            self.push(Step::CreateRaid {
                device: md_path.clone(),
                name: label.clone(),
                members: blanks.iter().map(|d| d.best_path().to_string()).collect(),
            });
            let target = self.cfg.mount.clone();
            self.make_fs(md_path, &target, &label, Some(blanks.len()))?;
            self.bind_dirs(None)
        }
    }
}
