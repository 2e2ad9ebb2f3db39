//! What `setup` is asked to do ([`SetupRequest`], as typed) and the checked request
//! ([`SetupConfig`]): every value parsed once into the validated types of [`crate::valid`], shared
//! with `render`; bind directories consistent with the mount and the layout; the boot-time
//! unit's binary outside build directories.

use super::live::Flags;
use super::SetupError;
pub use crate::valid::FsType;
use crate::valid::{
    check_bind_names, check_mount_names, check_unit_where, Invalid, Label, Mode, MountOptions,
    MountPath, Owner,
};
use std::path::{Component, Path, PathBuf};

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

/// What the user asked for, as typed: [`SetupRequest::check`] turns it into a [`SetupConfig`].
#[derive(Debug, Clone)]
pub struct SetupRequest {
    pub mount: PathBuf,
    pub devices: Option<Vec<String>>,
    pub layout: LayoutChoice,
    pub fs: FsType,
    pub label: String,
    pub options: Vec<String>,
    pub owner: Option<String>,
    pub mode: Option<String>,
    pub bind: Vec<PathBuf>,
    pub persist: Persist,
    pub persist_root: PathBuf,
    pub dry_run: bool,
    pub boot_binary: Option<PathBuf>,
    /// Accept a `boot_binary` below a build directory (`--allow-build-binary`).
    pub allow_build_binary: bool,
    /// Mount over a mount point that is not empty, hiding what it holds (`--allow-nonempty`).
    pub allow_nonempty: bool,
}

/// A checked setup request: every value that reaches a command line, fstab or a unit is one of
/// the validated types of [`crate::valid`].
#[derive(Debug, Clone)]
pub struct SetupConfig {
    pub mount: MountPath,
    /// Explicit devices (`--devices`); `None` takes every eligible ephemeral disk.
    pub devices: Option<Vec<DevicePath>>,
    pub layout: LayoutChoice,
    pub fs: FsType,
    pub label: Label,
    /// Mount options: `defaults,noatime` plus what `--options` adds (never `nofail`: persisted
    /// entries always carry it and a live mount ignores it).
    pub options: MountOptions,
    pub owner: Option<Owner>,
    pub mode: Option<Mode>,
    /// Directories to move onto the new filesystem, parent before child.
    pub bind: Vec<MountPath>,
    pub persist: Persist,
    /// Where persisted units / fstab are written (`/` for the node).
    pub persist_root: PathBuf,
    pub dry_run: bool,
    /// With `--persist systemd`: the `disktier` binary a boot-time unit runs `setup` with, so
    /// disks that come back blank after a stop/start are made again before the mounts.
    pub boot_binary: Option<MountPath>,
    /// Mount over a mount point that is not empty (`--allow-nonempty`).
    pub allow_nonempty: bool,
}

/// A `--devices` entry: an absolute path under /dev without control characters, blanks or
/// `..` (it is passed to mkfs, mdadm and wipefs, and printed in `--dry-run` scripts).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct DevicePath(String);

impl DevicePath {
    pub fn parse(raw: &str) -> Result<DevicePath, Invalid> {
        let ok = raw.starts_with("/dev/")
            && raw.len() > 5
            && raw.len() <= 4095
            && !raw.split('/').any(|c| c == ".." || c == ".")
            && raw
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/-_.:+@".contains(c));
        if ok {
            Ok(DevicePath(raw.to_string()))
        } else {
            Err(Invalid {
                flag: "--devices",
                value: raw.chars().take(200).collect(),
                why: "pass a device under /dev (e.g. /dev/disk/by-id/nvme-...) of letters, digits and / - _ . : + @".into(),
            })
        }
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for DevicePath {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for DevicePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Default filesystem label: how a later run recognises the disks it made.
pub const DEFAULT_LABEL: &str = "disktier";

/// Kernel filesystems no mount point or bind directory may lie in: proc(5), sysfs(5) and
/// devtmpfs hold no data, and a mount there hides what the kernel shows.
const KERNEL_FS_DIRS: &[&str] = &["/proc", "/sys", "/dev"];

/// Refuses `p` (given as `flag`) when it is or lies below /proc, /sys or /dev.
fn check_not_kernel_fs(flag: &str, p: &MountPath) -> Result<(), SetupError> {
    match kernel_fs_refusal(flag, p) {
        Some(why) => Err(SetupError::Config(why)),
        None => Ok(()),
    }
}

/// Why `p` (given as `flag`) cannot be a mount point or bind directory, when it is or lies below
/// /proc, /sys or /dev (`render` refuses it in the same words).
pub(crate) fn kernel_fs_refusal(flag: &str, p: &MountPath) -> Option<String> {
    KERNEL_FS_DIRS
        .iter()
        .find(|k| p.as_str() == **k || p.as_str().starts_with(&format!("{k}/")))
        .map(|k| format!(
            "{flag} {p} lies in {k}, a kernel filesystem that holds no data: choose a directory on a disk, e.g. /var/lib/containers"
        ))
}

/// Why `options` cannot go with the flags in `given` (name, whether given) that write to the
/// filesystem: a read-only mount (`render` refuses it in the same words).
pub(crate) fn read_only_refusal(options: &MountOptions, given: &[(&str, bool)]) -> Option<String> {
    if !Flags::requested(options).read_only() {
        return None;
    }
    let writes: Vec<&str> = given
        .iter()
        .filter(|(_, given)| *given)
        .map(|(f, _)| *f)
        .collect();
    (!writes.is_empty()).then(|| {
        format!(
            "--options ro mounts the filesystem read-only, but {} must write to it: drop ro, or drop {}",
            writes.join(", "),
            writes.join(" and ")
        )
    })
}

/// Removes `.` and trailing slashes; refuses relative paths, `..` and control characters (for
/// `--root`, which may be `/`).
pub fn clean_abs(p: &Path, what: &str) -> Result<PathBuf, SetupError> {
    let s = p.to_str().unwrap_or("\u{fffd}");
    if s.chars().any(char::is_control) || p.to_str().is_none() {
        return Err(SetupError::Config(format!(
            "{what} {:?} contains a control character or is not UTF-8: pass a plain path",
            p.display().to_string()
        )));
    }
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

impl SetupRequest {
    /// A request with the defaults for everything but the mount point.
    pub fn new(mount: impl Into<PathBuf>) -> SetupRequest {
        SetupRequest {
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
            allow_build_binary: false,
            allow_nonempty: false,
        }
    }

    /// Checks and normalises the request: each value parsed once into its validated type.
    pub fn check(self) -> Result<SetupConfig, SetupError> {
        let mount = MountPath::parse_path("--mount", &self.mount)?;
        check_mount_names("--mount", &mount)?;
        let separate = self.layout == LayoutChoice::Separate;
        let label = Label::parse(
            "--label",
            &self.label,
            self.fs.as_str(),
            self.fs.max_label(),
            if separate { 3 } else { 0 },
            if separate {
                ", including the -N suffix of --layout separate"
            } else {
                ""
            },
        )?;
        let options = MountOptions::parse("--options", &self.options)?.without("nofail");
        let owner = self
            .owner
            .as_deref()
            .map(|o| Owner::parse("--owner", o))
            .transpose()?;
        let mode = self
            .mode
            .as_deref()
            .map(|m| Mode::parse("--mode", m))
            .transpose()?;
        check_not_kernel_fs("--mount", &mount)?;
        let mut binds: Vec<MountPath> = Vec::new();
        for b in &self.bind {
            let b = MountPath::parse_path("--bind", b)?;
            check_bind_names("--bind", &b)?;
            if b == mount || b.is_below(&mount) || mount.is_below(&b) {
                return Err(SetupError::Config(format!(
                    "--bind {b}: a bind directory must be outside --mount {mount} and not contain it"
                )));
            }
            check_not_kernel_fs("--bind", &b)?;
            if binds.contains(&b) {
                return Err(SetupError::Config(format!(
                    "--bind {b} is given twice: name each directory once"
                )));
            }
            binds.push(b);
        }
        // Parent before child: a child bound first would be hidden by its parent's bind.
        binds.sort_by(|a, b| a.depth().cmp(&b.depth()).then(a.cmp(b)));
        if !binds.is_empty() && separate {
            return Err(SetupError::Config(
                "--bind needs one filesystem, but --layout separate makes one per disk: drop --bind or the separate layout".into(),
            ));
        }
        if self.persist == Persist::Systemd {
            check_unit_where("--mount", &mount)?;
            for b in &binds {
                check_unit_where("--bind", b)?;
            }
        }
        let persist_root = clean_abs(&self.persist_root, "--root")?;
        let devices = match self.devices {
            Some(devs) if devs.is_empty() => {
                return Err(SetupError::Config(
                    "--devices is empty: name at least one device, or leave it out for the eligible ephemeral disks".into(),
                ))
            }
            Some(devs) => {
                let mut out: Vec<DevicePath> = Vec::new();
                for d in &devs {
                    let d = DevicePath::parse(d)?;
                    if out.contains(&d) {
                        return Err(SetupError::Config(format!(
                            "--devices {d} is given twice: name each disk once"
                        )));
                    }
                    out.push(d);
                }
                Some(out)
            }
            None => None,
        };
        // A read-only mount cannot take what needs a write: the chown failed on it, and every
        // re-run failed again at the same step (found by QA).
        if let Some(why) = read_only_refusal(
            &options,
            &[
                ("--owner", owner.is_some()),
                ("--mode", mode.is_some()),
                ("--bind", !binds.is_empty()),
            ],
        ) {
            return Err(SetupError::Config(why));
        }
        let boot_binary = match &self.boot_binary {
            None => None,
            Some(b) => {
                let p = MountPath::parse_path("the boot-time unit's binary", b)?;
                let cache = cache_directory_of(Path::new(p.as_str()));
                let why = p.transient_reason().map(str::to_string).or_else(|| {
                    cache.map(|d| format!("it lies in {}, a cache directory (it holds a CACHEDIR.TAG, as a cargo target directory does)", d.display()))
                });
                if let Some(why) = why {
                    if !self.allow_build_binary {
                        return Err(SetupError::Config(format!(
                            "--persist systemd writes a boot-time unit that runs {p}, but {why}, which may be gone at the next boot: install the binary first (install -m 0755 {p} /usr/local/bin/disktier) and run that, or pass --allow-build-binary"
                        )));
                    }
                }
                Some(p)
            }
        };
        Ok(SetupConfig {
            mount,
            devices,
            layout: self.layout,
            fs: self.fs,
            label,
            options,
            owner,
            mode,
            bind: binds,
            persist: self.persist,
            persist_root,
            dry_run: self.dry_run,
            boot_binary,
            allow_nonempty: self.allow_nonempty,
        })
    }
}

impl SetupConfig {
    /// The `setup` arguments that repeat this request (for the boot-time unit), persisting
    /// nothing: the unit itself is the persistence.
    pub fn to_args(&self) -> Vec<String> {
        let given: Option<Vec<String>> = self
            .devices
            .as_ref()
            .map(|d| d.iter().map(|p| p.as_str().to_string()).collect());
        self.to_args_with_devices(given.as_deref())
    }

    /// [`SetupConfig::to_args`] with `--devices` replaced by `devices` (the stable names the
    /// boot-time unit must use instead of kernel names).
    pub fn to_args_with_devices(&self, devices: Option<&[String]>) -> Vec<String> {
        let mut a = vec![
            "setup".to_string(),
            "--mount".into(),
            self.mount.to_string(),
        ];
        if let Some(d) = devices {
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
        a.extend(["--label".into(), self.label.to_string()]);
        let extra = self.options.extra();
        if !extra.is_empty() {
            a.extend(["--options".into(), extra.join(",")]);
        }
        if let Some(o) = &self.owner {
            a.extend(["--owner".into(), o.to_string()]);
        }
        if let Some(m) = self.mode {
            a.extend(["--mode".into(), m.to_string()]);
        }
        if !self.bind.is_empty() {
            let b: Vec<&str> = self.bind.iter().map(MountPath::as_str).collect();
            a.extend(["--bind".into(), b.join(",")]);
        }
        if self.allow_nonempty {
            a.push("--allow-nonempty".into());
        }
        a.extend(["--persist".into(), "none".into()]);
        a
    }

    pub fn options_string(&self) -> String {
        self.options.joined()
    }
}

/// The nearest directory above `binary` that is tagged as a cache (a `CACHEDIR.TAG` starting
/// with the signature of <https://bford.info/cachedir/>): cargo tags every target directory so,
/// wherever `CARGO_TARGET_DIR` puts it, and a cache may be emptied at any time.
fn cache_directory_of(binary: &Path) -> Option<PathBuf> {
    const SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";
    binary.ancestors().skip(1).find_map(|d| {
        let mut head = [0u8; SIGNATURE.len()];
        let mut f = std::fs::File::open(d.join("CACHEDIR.TAG")).ok()?;
        std::io::Read::read_exact(&mut f, &mut head).ok()?;
        (head == SIGNATURE).then(|| d.to_path_buf())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_added_options() {
        let mut c = SetupRequest::new("/var/lib/containers/");
        c.options = vec!["noatime,prjquota".into(), "discard".into()];
        let c = c.check().unwrap();
        assert_eq!(c.mount, "/var/lib/containers");
        assert_eq!(c.options_string(), "defaults,noatime,prjquota,discard");
    }

    #[test]
    fn binds_are_sorted_parent_first_and_checked() {
        let mut c = SetupRequest::new("/mnt/disks/ssd");
        c.bind = vec![
            "/var/lib/kubelet/pods".into(),
            "/var/lib/containerd".into(),
            "/var/lib/kubelet".into(),
        ];
        let c = c.check().unwrap();
        assert_eq!(
            c.bind.iter().map(|b| b.as_str()).collect::<Vec<_>>(),
            [
                "/var/lib/containerd",
                "/var/lib/kubelet",
                "/var/lib/kubelet/pods"
            ]
        );
        let mut bad = SetupRequest::new("/mnt/disks/ssd");
        bad.bind = vec!["/mnt/disks/ssd/x".into()];
        assert!(bad
            .check()
            .unwrap_err()
            .to_string()
            .contains("outside --mount"));
        let mut sep = SetupRequest::new("/mnt/d");
        sep.layout = LayoutChoice::Separate;
        sep.bind = vec!["/var/lib/x".into()];
        assert!(sep.check().is_err());
    }

    #[test]
    fn a_binary_in_a_cache_tagged_directory_is_found_wherever_it_is() {
        // A cargo target directory moved by CARGO_TARGET_DIR: no component is named target.
        let t = tempfile::tempdir().unwrap();
        let build = t.path().join("tgt");
        std::fs::create_dir_all(build.join("debug")).unwrap();
        let bin = build.join("debug/disktier");
        assert_eq!(cache_directory_of(&bin), None);
        std::fs::write(
            build.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n# created by cargo\n",
        )
        .unwrap();
        assert_eq!(cache_directory_of(&bin), Some(build.clone()));
        // A file of that name without the signature is not a tag.
        std::fs::write(build.join("CACHEDIR.TAG"), "Signature: something else\n").unwrap();
        assert_eq!(cache_directory_of(&bin), None);
    }

    #[test]
    fn labels_fit_the_filesystem() {
        let mut c = SetupRequest::new("/data");
        c.label = "a-very-long-label".into();
        let e = c.check().unwrap_err().to_string();
        assert!(e.contains("at most 12"), "{e}");
        let mut c = SetupRequest::new("/data");
        c.label = "bad label".into();
        assert!(c.check().is_err());
        let mut c = SetupRequest::new("relative");
        c.label = "x".into();
        assert!(c.check().unwrap_err().to_string().contains("absolute"));
    }
}
