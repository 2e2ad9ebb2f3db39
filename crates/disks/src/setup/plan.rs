//! Planning: from the disks' real state (sysfs, blkid, mountinfo) and the request, the steps
//! that bring the node to the requested state, and nothing more. A node already in that state
//! gets an empty plan; a node whose disks came back blank gets everything again; a node left
//! half-way by a crash gets the rest.

use super::config::{FsType, LayoutChoice, Persist, SetupConfig};
use super::kernel::{is_quota_option, Kernel};
use super::persist;
use super::step::Step;
use super::SetupError;
use crate::discover::{Disk, DiskClass, Ineligible, MountEntry, Node};
use crate::valid::MountPath;
use std::path::{Path, PathBuf};

/// How the chosen disks are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    Direct,
    Raid0,
    Separate,
}

/// What a chosen disk holds now, as far as setup is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DevState {
    /// Eligible: nothing on it.
    Blank,
    /// A filesystem disktier made (its label), possibly mounted.
    OurFs {
        fstype: String,
        uuid: Option<String>,
        label: String,
        /// For `--layout separate`: N of `LABEL-N`.
        index: Option<usize>,
    },
    /// A member of disktier's md array; `holder` is the running array (`md127`), if any.
    OurMember {
        holder: Option<String>,
    },
    Refused(Vec<Ineligible>),
}

impl DevState {
    pub fn word(&self) -> &'static str {
        match self {
            DevState::Blank => "blank",
            DevState::OurFs { .. } => "ours",
            DevState::OurMember { .. } => "raid-member",
            DevState::Refused(_) => "refused",
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct DeviceReport {
    pub path: String,
    pub name: String,
    pub class: DiskClass,
    pub state: &'static str,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Skipped {
    pub path: String,
    pub class: DiskClass,
    pub reasons: Vec<Ineligible>,
    pub why: String,
}

/// The plan for one round.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub layout: Option<Layout>,
    pub devices: Vec<DeviceReport>,
    pub skipped: Vec<Skipped>,
    pub steps: Vec<Step>,
    pub notes: Vec<String>,
}

/// Whether an md array name (`homehost:name` or `name`, as blkid reports it) is ours.
fn md_name_is(label: Option<&str>, ours: &str) -> bool {
    match label {
        Some(l) => l == ours || l.rsplit_once(':').is_some_and(|(_, n)| n == ours),
        None => false,
    }
}

/// `LABEL-N` -> N.
fn separate_index(label: &str, ours: &str) -> Option<usize> {
    label.strip_prefix(ours)?.strip_prefix('-')?.parse().ok()
}

/// What `d` holds for a request labelled `label`.
pub fn own_state(d: &Disk, label: &str) -> DevState {
    let hard = d.ineligible.iter().any(|r| {
        matches!(
            r,
            Ineligible::SystemDisk { .. } | Ineligible::ReadOnly | Ineligible::Partitioned { .. }
        )
    });
    if hard {
        return DevState::Refused(d.ineligible.clone());
    }
    let sig = &d.signature;
    match sig.fstype.as_deref() {
        Some("linux_raid_member") if md_name_is(sig.label.as_deref(), label) => {
            let md_holders: Vec<&String> =
                d.holders.iter().filter(|h| h.starts_with("md")).collect();
            if d.holders.len() == md_holders.len() && md_holders.len() <= 1 {
                DevState::OurMember {
                    holder: md_holders.first().map(|h| h.to_string()),
                }
            } else {
                DevState::Refused(d.ineligible.clone())
            }
        }
        Some(fs @ ("xfs" | "ext4")) => {
            let l = sig.label.clone().unwrap_or_default();
            let index = separate_index(&l, label);
            if (l == label || index.is_some()) && d.holders.is_empty() {
                DevState::OurFs {
                    fstype: fs.to_string(),
                    uuid: sig.uuid.clone(),
                    label: l,
                    index,
                }
            } else {
                DevState::Refused(d.ineligible.clone())
            }
        }
        _ if d.eligible => DevState::Blank,
        _ => DevState::Refused(d.ineligible.clone()),
    }
}

/// A filesystem UUID derived from the label and mount point: the same on every re-creation
/// (after a stop/start), so persisted units and fstab lines by UUID stay valid, and distinct
/// per mount point. 128 bits from two FNV-1a passes, stamped as an RFC 9562 version 8 UUID.
pub fn derived_uuid(label: &str, target: &Path) -> String {
    let key = format!("disktier\0{label}\0{}", target.display());
    let fnv = |seed: u64| {
        let mut h = seed;
        for b in key.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        h
    };
    let a = fnv(0xcbf29ce484222325);
    let b = fnv(a ^ 0x9e3779b97f4a7c15);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // variant 10
    let h: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The topmost mount at `target`, if any (mountinfo lists mounts in order; the last one on a
/// path is the one visible there).
fn top_mount<'a>(mounts: &'a [MountEntry], target: &MountPath) -> Option<&'a MountEntry> {
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
fn resolve<'a>(node: &'a Node, root: &Path, given: &str) -> Result<&'a Disk, SetupError> {
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
    Err(not_found())
}

/// Where persisted files go.
fn units_dir(cfg: &SetupConfig) -> PathBuf {
    cfg.persist_root.join("etc/systemd/system")
}

struct Planner<'a> {
    cfg: &'a SetupConfig,
    node: &'a Node,
    kernel: &'a Kernel,
    root: &'a Path,
    plan: Plan,
    /// Mounts made or found: (what for persistence, target, fstype, options).
    persisted: Vec<(String, MountPath, String)>,
    binds: Vec<(MountPath, MountPath)>,
    mounting: bool,
}

/// Plans one round. `root` is where discovery read the node (`/` for the real node).
pub fn plan(
    cfg: &SetupConfig,
    node: &Node,
    kernel: &Kernel,
    root: &Path,
    has_program: &dyn Fn(&str) -> bool,
) -> Result<Plan, SetupError> {
    if let Some(why) = &kernel.no_quota {
        if let Some(o) = cfg.options.iter().find(|o| is_quota_option(o)) {
            return Err(SetupError::NoQuota {
                option: o.to_string(),
                why: why.clone(),
            });
        }
    }
    let mut p = Planner {
        cfg,
        node,
        kernel,
        root,
        plan: Plan::default(),
        persisted: Vec::new(),
        binds: Vec::new(),
        mounting: false,
    };

    // Choose the disks.
    let mut chosen: Vec<(&Disk, DevState)> = Vec::new();
    match &cfg.devices {
        Some(list) => {
            for given in list {
                let d = resolve(node, root, given)?;
                if chosen.iter().any(|(c, _)| c.name == d.name) {
                    continue;
                }
                match own_state(d, &cfg.label) {
                    DevState::Refused(reasons) => {
                        return Err(SetupError::Refused {
                            device: given.to_string(),
                            reasons: reasons.iter().map(|r| r.to_string()).collect(),
                        })
                    }
                    s => chosen.push((d, s)),
                }
            }
        }
        None => {
            for d in node.disks.iter().filter(|d| d.ephemeral) {
                match own_state(d, &cfg.label) {
                    DevState::Refused(reasons) => p.plan.skipped.push(Skipped {
                        path: d.best_path().to_string(),
                        class: d.class,
                        why: reasons
                            .iter()
                            .map(|r| r.to_string())
                            .collect::<Vec<_>>()
                            .join("; "),
                        reasons,
                    }),
                    s => chosen.push((d, s)),
                }
            }
        }
    }
    for s in &p.plan.skipped {
        p.plan
            .notes
            .push(format!("skipped {} ({}): {}", s.path, s.class, s.why));
    }
    p.plan.devices = chosen
        .iter()
        .map(|(d, s)| DeviceReport {
            path: d.best_path().to_string(),
            name: d.name.clone(),
            class: d.class,
            state: s.word(),
        })
        .collect();
    if chosen.is_empty() {
        p.plan.notes.push(
            "no eligible local ephemeral disk (instance store, local SSD, Azure temp NVMe): nothing to do"
                .into(),
        );
        return Ok(p.plan);
    }

    // Choose the layout from the request and what the disks already hold.
    let members = chosen
        .iter()
        .filter(|(_, s)| matches!(s, DevState::OurMember { .. }))
        .count();
    let fss = chosen
        .iter()
        .filter(|(_, s)| matches!(s, DevState::OurFs { .. }))
        .count();
    let layout = match cfg.layout {
        LayoutChoice::Separate => {
            if members > 0 {
                return Err(SetupError::Config(format!(
                    "--layout separate, but {} already belong to disktier's RAID0 array {:?}: drop --layout separate to keep the array",
                    names(&chosen, |s| matches!(s, DevState::OurMember { .. })),
                    cfg.label
                )));
            }
            Layout::Separate
        }
        _ if members > 0 => Layout::Raid0,
        _ if chosen.len() == 1 => Layout::Direct,
        LayoutChoice::Auto | LayoutChoice::Raid0 => {
            if fss > 0 {
                return Err(SetupError::Config(format!(
                    "{} already hold disktier's filesystem, but {} disks were chosen: pass --devices with the disk(s) to keep, or --layout separate",
                    names(&chosen, |s| matches!(s, DevState::OurFs { .. })),
                    chosen.len()
                )));
            }
            Layout::Raid0
        }
    };
    p.plan.layout = Some(layout);
    match layout {
        Layout::Direct => {
            let (d, s) = &chosen[0];
            p.single(d, s, &cfg.mount, &cfg.label)?;
            p.bind_dirs(Some(d.maj_min.clone()))?;
        }
        Layout::Separate => p.separate(&chosen)?,
        Layout::Raid0 => p.raid(&chosen, has_program)?,
    }
    if p.plan.steps.iter().any(Step::replan_after) {
        return Ok(p.plan);
    }
    p.persist()?;
    if p.mounting && !kernel.selinux {
        p.plan
            .notes
            .push("SELinux is not enabled (no /sys/fs/selinux/enforce): no relabel needed".into());
    }
    Ok(p.plan)
}

fn names(chosen: &[(&Disk, DevState)], f: impl Fn(&DevState) -> bool) -> String {
    chosen
        .iter()
        .filter(|(_, s)| f(s))
        .map(|(d, _)| d.best_path().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Planner<'_> {
    fn push(&mut self, s: Step) {
        self.plan.steps.push(s);
    }

    /// Checks that a disk holding our filesystem is mounted nowhere but where we put things.
    fn check_mounted_only_at(&self, d: &Disk, target: &MountPath) -> Result<(), SetupError> {
        let allowed: Vec<&str> = std::iter::once(target.as_str())
            .chain(self.cfg.bind.iter().map(MountPath::as_str))
            .collect();
        if let Some(other) = d
            .mountpoints
            .iter()
            .find(|m| !allowed.contains(&m.as_str()))
        {
            return Err(SetupError::Refused {
                device: d.best_path().to_string(),
                reasons: vec![format!(
                    "holds disktier's filesystem but is mounted at {other}, not {target}: unmount it or pass --mount {other}",
                )],
            });
        }
        Ok(())
    }

    /// One disk used directly (also each disk of `--layout separate`).
    fn single(
        &mut self,
        d: &Disk,
        s: &DevState,
        target: &MountPath,
        label: &str,
    ) -> Result<(), SetupError> {
        match s {
            DevState::Blank => {
                let uuid = derived_uuid(label, target.as_path());
                self.push(Step::Mkfs {
                    device: d.best_path().to_string(),
                    fs: self.cfg.fs,
                    label: label.to_string(),
                    uuid: uuid.clone(),
                    stripe_members: None,
                    ext4_quota: self.ext4_quota(),
                });
                self.mount_fs(target, &uuid, self.cfg.fs.as_str(), None)
            }
            DevState::OurFs { fstype, uuid, .. } => {
                self.check_mounted_only_at(d, target)?;
                // xfs and ext4 always carry a UUID; blkid not reporting one means a damaged
                // superblock, which is not ours to repair.
                let what = uuid.clone().ok_or_else(|| SetupError::Refused {
                    device: d.best_path().to_string(),
                    reasons: vec![format!(
                        "its {fstype} filesystem labelled {:?} reports no UUID (damaged?): check it with xfs_repair -n / e2fsck -n",
                        self.cfg.label.as_str()
                    )],
                })?;
                if fstype != self.cfg.fs.as_str() {
                    self.plan.notes.push(format!(
                        "{} holds disktier's {fstype} filesystem: remounted as {fstype}, never reformatted",
                        d.best_path()
                    ));
                }
                let fstype = fstype.clone();
                self.mount_fs(target, &what, &fstype, Some(&d.maj_min))
            }
            _ => unreachable!("members and refused disks are not used directly"),
        }
    }

    fn ext4_quota(&self) -> bool {
        self.cfg.fs == FsType::Ext4 && self.cfg.options.iter().any(is_quota_option)
    }

    /// Mounts the filesystem with `uuid` at `target` unless it already is, then owner, mode,
    /// SELinux labels. `maj_min`: the device now holding it, when it exists already.
    fn mount_fs(
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
                self.owner_mode_if_changed(target);
                Ok(())
            }
            Some(m) => Err(SetupError::TargetBusy {
                target: target.as_path().to_path_buf(),
                source_dev: m.source.clone(),
                fstype: m.fstype.clone(),
            }),
            _ => {
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
                if self.kernel.selinux {
                    self.push(Step::Restorecon {
                        path: target.clone(),
                    });
                }
                Ok(())
            }
        }
    }

    /// For a filesystem already mounted: chown/chmod only when they differ.
    fn owner_mode_if_changed(&mut self, target: &MountPath) {
        use std::os::unix::fs::MetadataExt;
        let meta = if self.root == Path::new("/") {
            std::fs::metadata(target.as_path()).ok()
        } else {
            None
        };
        if let Some(o) = self.cfg.owner.clone() {
            let same = meta
                .as_ref()
                .is_some_and(|m| owner_ids(self.root, &o.to_string()) == Some((m.uid(), m.gid())));
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
    fn bind_dirs(&mut self, maj_min: Option<String>) -> Result<(), SetupError> {
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
                Some(m) if Some(&m.maj_min) == maj_min.as_ref() && m.root == want_root => continue,
                Some(m) => {
                    return Err(SetupError::TargetBusy {
                        target: dir.as_path().to_path_buf(),
                        source_dev: m.source.clone(),
                        fstype: m.fstype.clone(),
                    })
                }
                None => {}
            }
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

    fn separate(&mut self, chosen: &[(&Disk, DevState)]) -> Result<(), SetupError> {
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

    fn raid(
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
                    let uuid = derived_uuid(&label, self.cfg.mount.as_path());
                    self.push(Step::Mkfs {
                        device: dev,
                        fs: self.cfg.fs,
                        label: label.clone(),
                        uuid: uuid.clone(),
                        stripe_members: Some(members.len()),
                        ext4_quota: self.ext4_quota(),
                    });
                    let target = self.cfg.mount.clone();
                    self.mount_fs(&target, &uuid, self.cfg.fs.as_str(), None)?;
                    self.bind_dirs(None)
                }
                (Some(fs @ ("xfs" | "ext4")), Some(l)) if l == label => {
                    let uuid = md.signature.uuid.clone().unwrap_or_default();
                    let target = self.cfg.mount.clone();
                    self.check_mounted_only_at(md, &target)?;
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
            let uuid = derived_uuid(&label, self.cfg.mount.as_path());
            self.push(Step::CreateRaid {
                device: md_path.clone(),
                name: label.clone(),
                members: blanks.iter().map(|d| d.best_path().to_string()).collect(),
            });
            self.push(Step::Mkfs {
                device: md_path,
                fs: self.cfg.fs,
                label: label.clone(),
                uuid: uuid.clone(),
                stripe_members: Some(blanks.len()),
                ext4_quota: self.ext4_quota(),
            });
            let target = self.cfg.mount.clone();
            self.mount_fs(&target, &uuid, self.cfg.fs.as_str(), None)?;
            self.bind_dirs(None)
        }
    }

    /// The `--devices` for the boot-time unit: each kernel name (`/dev/nvme1n1`, `/dev/loop3`),
    /// which can name another disk after a reboot, replaced by the disk's /dev/disk/by-id/ link,
    /// with a warning; refused when the disk has none.
    fn stable_devices(&mut self) -> Result<Option<Vec<String>>, SetupError> {
        let Some(given) = &self.cfg.devices else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for g in given {
            let g = g.as_str();
            if !crate::valid::is_kernel_device_name(g) {
                out.push(g.to_string());
                continue;
            }
            let name = given_name(self.root, g);
            let stable = self
                .plan
                .devices
                .iter()
                .find(|d| Some(&d.name) == name.as_ref())
                .map(|d| d.path.clone())
                .filter(|p| p.starts_with("/dev/disk/by-id/"));
            match stable {
                Some(p) => {
                    self.plan.notes.push(format!(
                        "warning: --devices {g} is a kernel name, which can name another disk after a reboot: the boot-time unit names it {p}, the mounts by filesystem UUID"
                    ));
                    out.push(p);
                }
                None => {
                    return Err(SetupError::Config(format!(
                        "--devices {g} is a kernel name, which can name another disk after a reboot, and it has no /dev/disk/by-id/ link for the boot-time unit: pass a /dev/disk/by-id/ path, or --persist fstab (mounts by UUID, no re-creation at boot)"
                    )))
                }
            }
        }
        Ok(Some(out))
    }

    /// `--persist`: units or fstab lines for every mount and bind, written only when they
    /// differ from what is there. A kernel name in `--devices` is never written: mounts are by
    /// filesystem UUID, the boot-time unit by /dev/disk/by-id/ ([`Planner::stable_devices`]).
    fn persist(&mut self) -> Result<(), SetupError> {
        let opts = self.cfg.options_string();
        if self.cfg.persist == Persist::Fstab
            || self.cfg.persist == Persist::Systemd && self.cfg.boot_binary.is_none()
        {
            if let Some(given) = &self.cfg.devices {
                for g in given
                    .iter()
                    .filter(|g| crate::valid::is_kernel_device_name(g.as_str()))
                {
                    self.plan.notes.push(format!(
                        "warning: --devices {} is a kernel name, which can change between boots: the persisted mounts name the filesystem UUID instead",
                        g.as_str()
                    ));
                }
            }
        }
        match self.cfg.persist {
            Persist::None => Ok(()),
            Persist::Systemd => {
                let dir = units_dir(self.cfg);
                let mut changed = Vec::new();
                let mut units = Vec::new();
                let mut fs_unit_for_binds = String::new();
                for (what, target, fstype) in self.persisted.clone() {
                    let name = persist::mount_unit_name(&target);
                    let body = persist::fs_unit(&what, &target, &fstype, &opts);
                    fs_unit_for_binds = name.clone();
                    units.push((name, body));
                }
                for (src, target) in self.binds.clone() {
                    let name = persist::mount_unit_name(&target);
                    units.push((name, persist::bind_unit(&src, &target, &fs_unit_for_binds)));
                }
                if let Some(bin) = &self.cfg.boot_binary {
                    let devices = self.stable_devices()?;
                    let exec: Vec<String> = std::iter::once(bin.to_string())
                        .chain(self.cfg.to_args_with_devices(devices.as_deref()))
                        .map(|a| persist::exec_arg(&a))
                        .collect();
                    let mounts: Vec<String> = self
                        .persisted
                        .iter()
                        .map(|(_, t, _)| persist::mount_unit_name(t))
                        .collect();
                    units.push((
                        persist::boot_unit_name(&self.cfg.mount),
                        persist::boot_unit(&exec.join(" "), &self.cfg.mount, &mounts.join(" ")),
                    ));
                }
                for (name, body) in units {
                    let path = dir.join(&name);
                    let wants = dir.join("local-fs.target.wants").join(&name);
                    let same = std::fs::read_to_string(&path).ok().as_deref() == Some(&body);
                    if !same {
                        self.push(Step::WriteFile {
                            was: persist::content_hash(&path),
                            path,
                            contents: body,
                        });
                    }
                    if !same || std::fs::symlink_metadata(&wants).is_err() {
                        changed.push(name);
                    }
                }
                if !changed.is_empty() {
                    let mut args = vec![
                        format!("--root={}", self.cfg.persist_root.display()),
                        "enable".to_string(),
                    ];
                    args.extend(changed);
                    self.push(Step::Systemctl { args });
                    if self.cfg.persist_root == Path::new("/")
                        && Path::new("/run/systemd/system").exists()
                    {
                        self.push(Step::Systemctl {
                            args: vec!["daemon-reload".into()],
                        });
                    }
                }
                Ok(())
            }
            Persist::Fstab => {
                let path = self.cfg.persist_root.join("etc/fstab");
                let mut lines = Vec::new();
                for (what, target, fstype) in &self.persisted {
                    let uuid = what.rsplit('/').next().unwrap_or_default();
                    lines.push(persist::fstab_line(
                        &format!("UUID={uuid}"),
                        target,
                        fstype,
                        &opts,
                    ));
                }
                for (src, target) in &self.binds {
                    lines.push(persist::fstab_line(src.as_str(), target, "none", "bind"));
                }
                let existing = std::fs::read_to_string(&path).unwrap_or_default();
                let merged = persist::merge_fstab(&existing, &lines).map_err(|line| {
                    SetupError::Config(format!(
                        "{} already has a line for a target disktier mounts ({line}): remove it, or use --persist systemd",
                        path.display()
                    ))
                })?;
                if merged != existing {
                    self.push(Step::WriteFile {
                        was: persist::content_hash(&path),
                        path,
                        contents: merged,
                    });
                }
                Ok(())
            }
        }
    }
}

/// uid and gid for `user:group` from ROOT/etc/passwd and ROOT/etc/group (numeric ids pass
/// through). None when a name is not in the files (NSS users): chown is then always planned.
pub fn owner_ids(root: &Path, owner: &str) -> Option<(u32, u32)> {
    let (u, g) = owner.split_once(':').unwrap_or((owner, ""));
    let passwd = std::fs::read_to_string(root.join("etc/passwd")).unwrap_or_default();
    let group = std::fs::read_to_string(root.join("etc/group")).unwrap_or_default();
    let lookup = |text: &str, name: &str, field: usize| -> Option<(u32, u32)> {
        text.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 3 && f[0] == name).then(|| {
                (
                    f[2].parse().unwrap_or(u32::MAX),
                    f[field].parse().unwrap_or(u32::MAX),
                )
            })
        })
    };
    let (uid, primary_gid) = match u.parse::<u32>() {
        Ok(n) => (n, None),
        Err(_) => {
            let (uid, gid) = lookup(&passwd, u, 3)?;
            (uid, Some(gid))
        }
    };
    let gid = if g.is_empty() {
        primary_gid?
    } else {
        match g.parse::<u32>() {
            Ok(n) => n,
            Err(_) => lookup(&group, g, 2)?.0,
        }
    };
    Some((uid, gid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_uuid_is_stable_distinct_and_well_formed() {
        let a = derived_uuid("disktier", Path::new("/var/lib/containers"));
        assert_eq!(
            a,
            derived_uuid("disktier", Path::new("/var/lib/containers"))
        );
        assert_ne!(a, derived_uuid("disktier", Path::new("/data")));
        assert_ne!(
            a,
            derived_uuid("disktier-0", Path::new("/var/lib/containers"))
        );
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "8", "version 8: {a}");
        assert!("89ab".contains(&a[19..20]), "variant: {a}");
    }

    #[test]
    fn md_names_and_separate_labels() {
        assert!(md_name_is(Some("any:disktier"), "disktier"));
        assert!(md_name_is(Some("disktier"), "disktier"));
        assert!(!md_name_is(Some("any:other"), "disktier"));
        assert_eq!(separate_index("disktier-3", "disktier"), Some(3));
        assert_eq!(separate_index("disktier", "disktier"), None);
    }

    #[test]
    fn owner_ids_from_files() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("etc")).unwrap();
        std::fs::write(
            t.path().join("etc/passwd"),
            "ec2-user:x:1000:1000::/home/ec2-user:/bin/bash\n",
        )
        .unwrap();
        std::fs::write(
            t.path().join("etc/group"),
            "ec2-user:x:1000:\nwheel:x:10:\n",
        )
        .unwrap();
        assert_eq!(owner_ids(t.path(), "ec2-user:ec2-user"), Some((1000, 1000)));
        assert_eq!(owner_ids(t.path(), "ec2-user:wheel"), Some((1000, 10)));
        assert_eq!(owner_ids(t.path(), "ec2-user"), Some((1000, 1000)));
        assert_eq!(owner_ids(t.path(), "0:0"), Some((0, 0)));
        assert_eq!(owner_ids(t.path(), "nobody:x"), None);
    }
}
