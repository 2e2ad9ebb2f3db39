//! What `setup` is asked to do, checked: paths absolute, label valid for the filesystem, owner
//! and mode well-formed, bind directories consistent with the mount and the layout.

use super::SetupError;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FsType {
    Xfs,
    Ext4,
}

impl FsType {
    pub fn as_str(self) -> &'static str {
        match self {
            FsType::Xfs => "xfs",
            FsType::Ext4 => "ext4",
        }
    }
    /// Longest label the filesystem stores: xfs 12 bytes (xfs_admin(8)), ext4 16 (e2label(8)).
    pub fn max_label(self) -> usize {
        match self {
            FsType::Xfs => 12,
            FsType::Ext4 => 16,
        }
    }
}

/// How several disks are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LayoutChoice {
    /// One disk: used directly; several: RAID0.
    Auto,
    Raid0,
    /// One filesystem and mount per disk: MOUNT/0, MOUNT/1, ...
    Separate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Persist {
    None,
    Systemd,
    Fstab,
}

/// A checked setup request.
#[derive(Debug, Clone)]
pub struct SetupConfig {
    pub mount: PathBuf,
    /// Explicit devices (`--devices`); `None` takes every eligible ephemeral disk.
    pub devices: Option<Vec<String>>,
    pub layout: LayoutChoice,
    pub fs: FsType,
    pub label: String,
    /// Mount options: `defaults,noatime` plus what `--options` adds.
    pub options: Vec<String>,
    pub owner: Option<String>,
    pub mode: Option<u32>,
    /// Directories to move onto the new filesystem, parent before child.
    pub bind: Vec<PathBuf>,
    pub persist: Persist,
    /// Where persisted units / fstab are written (`/` for the node).
    pub persist_root: PathBuf,
    pub dry_run: bool,
    /// With `--persist systemd`: the `disktier` binary a boot-time unit runs `setup` with, so
    /// disks that come back blank after a stop/start are made again before the mounts.
    pub boot_binary: Option<String>,
}

/// Default mount options: `noatime` saves a metadata write per read (references.md, EKS uses
/// `defaults,noatime`).
pub const DEFAULT_OPTIONS: &[&str] = &["defaults", "noatime"];

/// Default filesystem label: how a later run recognises the disks it made.
pub const DEFAULT_LABEL: &str = "disktier";

/// Removes `.` and trailing slashes; refuses relative paths and `..`.
pub fn clean_abs(p: &Path, what: &str) -> Result<PathBuf, SetupError> {
    if !p.is_absolute() {
        return Err(SetupError::Config(format!(
            "{what} {} is not an absolute path: pass it starting with /",
            p.display()
        )));
    }
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::ParentDir => {
                return Err(SetupError::Config(format!(
                    "{what} {} contains '..': pass the resolved path",
                    p.display()
                )))
            }
            _ => {}
        }
    }
    Ok(out)
}

impl SetupConfig {
    /// A request with the defaults for everything but the mount point.
    pub fn new(mount: impl Into<PathBuf>) -> SetupConfig {
        SetupConfig {
            mount: mount.into(),
            devices: None,
            layout: LayoutChoice::Auto,
            fs: FsType::Xfs,
            label: DEFAULT_LABEL.to_string(),
            options: Vec::new(),
            owner: None,
            mode: None,
            bind: Vec::new(),
            persist: Persist::None,
            persist_root: PathBuf::from("/"),
            dry_run: false,
            boot_binary: None,
        }
    }

    /// Checks and normalises the request.
    pub fn check(mut self) -> Result<SetupConfig, SetupError> {
        self.mount = clean_abs(&self.mount, "--mount")?;
        if self.mount == Path::new("/") {
            return Err(SetupError::Config(
                "--mount / would hide the root filesystem: pass a directory such as /var/lib/containers".into(),
            ));
        }
        let max = self.fs.max_label();
        if self.label.is_empty()
            || !self
                .label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(SetupError::Config(format!(
                "--label {:?}: use letters, digits, '-' and '_' only",
                self.label
            )));
        }
        // Separate layouts label disk N as LABEL-N.
        let longest = if self.layout == LayoutChoice::Separate {
            self.label.len() + 3
        } else {
            self.label.len()
        };
        if longest > max {
            return Err(SetupError::Config(format!(
                "--label {:?} is too long for {} (at most {max} characters{}): pass a shorter --label",
                self.label,
                self.fs.as_str(),
                if self.layout == LayoutChoice::Separate {
                    ", including the -N suffix of --layout separate"
                } else {
                    ""
                }
            )));
        }
        let mut opts: Vec<String> = DEFAULT_OPTIONS.iter().map(|s| s.to_string()).collect();
        for o in std::mem::take(&mut self.options) {
            for o in o.split(',').map(str::trim).filter(|o| !o.is_empty()) {
                if o == "nofail" {
                    continue; // persisted entries always carry it; a live mount ignores it
                }
                if !opts.iter().any(|x| x == o) {
                    opts.push(o.to_string());
                }
            }
        }
        self.options = opts;
        if let Some(o) = &self.owner {
            let (u, g) = o.split_once(':').unwrap_or((o.as_str(), ""));
            let ok = |s: &str| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.$".contains(c))
            };
            if !ok(u) || (o.contains(':') && !ok(g)) {
                return Err(SetupError::Config(format!(
                    "--owner {o:?}: pass user:group (names or numeric ids), e.g. ec2-user:ec2-user"
                )));
            }
        }
        if let Some(m) = self.mode {
            if m > 0o7777 {
                return Err(SetupError::Config(format!(
                    "--mode {m:o}: pass an octal mode up to 7777, e.g. 0755"
                )));
            }
        }
        let mut binds = Vec::new();
        for b in std::mem::take(&mut self.bind) {
            let b = clean_abs(&b, "--bind")?;
            if b == Path::new("/") || b.starts_with(&self.mount) || self.mount.starts_with(&b) {
                return Err(SetupError::Config(format!(
                    "--bind {}: a bind directory must be outside --mount {} and not contain it",
                    b.display(),
                    self.mount.display()
                )));
            }
            if !binds.contains(&b) {
                binds.push(b);
            }
        }
        // Parent before child: a child bound first would be hidden by its parent's bind.
        binds.sort_by(|a: &PathBuf, b: &PathBuf| {
            a.components()
                .count()
                .cmp(&b.components().count())
                .then(a.cmp(b))
        });
        if !binds.is_empty() && self.layout == LayoutChoice::Separate {
            return Err(SetupError::Config(
                "--bind needs one filesystem, but --layout separate makes one per disk: drop --bind or the separate layout".into(),
            ));
        }
        self.bind = binds;
        self.persist_root = clean_abs(&self.persist_root, "--root")?;
        if let Some(devs) = &self.devices {
            if devs.is_empty() {
                return Err(SetupError::Config(
                    "--devices is empty: name at least one device, or leave it out for the eligible ephemeral disks".into(),
                ));
            }
        }
        Ok(self)
    }

    /// The `setup` arguments that repeat this request (for the boot-time unit), persisting
    /// nothing: the unit itself is the persistence.
    pub fn to_args(&self) -> Vec<String> {
        let mut a = vec![
            "setup".to_string(),
            "--mount".into(),
            self.mount.display().to_string(),
        ];
        if let Some(d) = &self.devices {
            a.push("--devices".into());
            a.push(d.join(","));
        }
        let layout = match self.layout {
            LayoutChoice::Auto => "auto",
            LayoutChoice::Raid0 => "raid0",
            LayoutChoice::Separate => "separate",
        };
        a.extend([
            "--layout".into(),
            layout.into(),
            "--fs".into(),
            self.fs.as_str().into(),
        ]);
        a.extend(["--label".into(), self.label.clone()]);
        let extra: Vec<&str> = self
            .options
            .iter()
            .map(String::as_str)
            .filter(|o| !DEFAULT_OPTIONS.contains(o))
            .collect();
        if !extra.is_empty() {
            a.extend(["--options".into(), extra.join(",")]);
        }
        if let Some(o) = &self.owner {
            a.extend(["--owner".into(), o.clone()]);
        }
        if let Some(m) = self.mode {
            a.extend(["--mode".into(), format!("{m:04o}")]);
        }
        if !self.bind.is_empty() {
            let b: Vec<String> = self.bind.iter().map(|p| p.display().to_string()).collect();
            a.extend(["--bind".into(), b.join(",")]);
        }
        a.extend(["--persist".into(), "none".into()]);
        a
    }

    pub fn options_string(&self) -> String {
        self.options.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_added_options() {
        let mut c = SetupConfig::new("/var/lib/containers/");
        c.options = vec!["noatime,prjquota".into(), "discard".into()];
        let c = c.check().unwrap();
        assert_eq!(c.mount, Path::new("/var/lib/containers"));
        assert_eq!(c.options_string(), "defaults,noatime,prjquota,discard");
    }

    #[test]
    fn binds_are_sorted_parent_first_and_checked() {
        let mut c = SetupConfig::new("/mnt/disks/ssd");
        c.bind = vec![
            "/var/lib/kubelet/pods".into(),
            "/var/lib/containerd".into(),
            "/var/lib/kubelet".into(),
        ];
        let c = c.check().unwrap();
        assert_eq!(
            c.bind,
            [
                PathBuf::from("/var/lib/containerd"),
                "/var/lib/kubelet".into(),
                "/var/lib/kubelet/pods".into()
            ]
        );
        let mut bad = SetupConfig::new("/mnt/disks/ssd");
        bad.bind = vec!["/mnt/disks/ssd/x".into()];
        assert!(bad
            .check()
            .unwrap_err()
            .to_string()
            .contains("outside --mount"));
        let mut sep = SetupConfig::new("/mnt/d");
        sep.layout = LayoutChoice::Separate;
        sep.bind = vec!["/var/lib/x".into()];
        assert!(sep.check().is_err());
    }

    #[test]
    fn labels_fit_the_filesystem() {
        let mut c = SetupConfig::new("/data");
        c.label = "a-very-long-label".into();
        let e = c.check().unwrap_err().to_string();
        assert!(e.contains("at most 12"), "{e}");
        let mut c = SetupConfig::new("/data");
        c.label = "bad label".into();
        assert!(c.check().is_err());
        let mut c = SetupConfig::new("relative");
        c.label = "x".into();
        assert!(c.check().unwrap_err().to_string().contains("absolute"));
    }
}
