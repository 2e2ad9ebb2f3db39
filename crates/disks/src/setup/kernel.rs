//! What the running kernel supports that setup depends on: md RAID, filesystem quotas, SELinux.
//! Read below a root directory so fixture trees can describe other kernels.

use super::config::FsType;
use std::io::Read;
use std::path::Path;

/// Kernel facts, read once per run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    pub md: bool,
    pub selinux: bool,
    /// `None`: quotas for this filesystem are supported or could not be ruled out; `Some(why)`:
    /// they are not, and why we know.
    pub no_quota: Option<String>,
}

pub use crate::valid::QUOTA_OPTIONS;

/// Whether `o` needs kernel quota support; case-insensitive, so that no spelling of a quota
/// option slips past the check of [`quota_missing`].
pub fn is_quota_option(o: &str) -> bool {
    let key = o.split('=').next().unwrap_or(o).to_ascii_lowercase();
    let key = key.as_str();
    QUOTA_OPTIONS.contains(&key) || key == "usrjquota" || key == "grpjquota" || key == "jqfmt"
}

/// `CONFIG_X` from `/proc/config.gz` (CONFIG_IKCONFIG_PROC): `Some(true)` when `=y`/`=m`,
/// `Some(false)` when "is not set", `None` when the file or the line is missing.
pub fn config_option(root: &Path, name: &str) -> Option<bool> {
    let f = std::fs::File::open(root.join("proc/config.gz")).ok()?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut text)
        .ok()?;
    for line in text.lines() {
        if line == format!("# {name} is not set") {
            return Some(false);
        }
        if let Some(v) = line.strip_prefix(&format!("{name}=")) {
            return Some(v == "y" || v == "m");
        }
    }
    None
}

/// Whether md RAID can be used: `/proc/mdstat` appears once md is loaded; a module that is not
/// loaded yet is found under `/lib/modules/RELEASE` (mdadm loads it on demand).
pub fn md_available(root: &Path) -> bool {
    if root.join("proc/mdstat").exists() || root.join("sys/module/md_mod").exists() {
        return true;
    }
    let release = std::fs::read_to_string(root.join("proc/sys/kernel/osrelease"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    if release.is_empty() {
        return false;
    }
    let dir = root
        .join("lib/modules")
        .join(release)
        .join("kernel/drivers/md");
    ["md-mod.ko", "md-mod.ko.xz", "md-mod.ko.zst", "md-mod.ko.gz"]
        .iter()
        .any(|f| dir.join(f).exists())
}

/// Why quota mount options cannot work for `fs` on this kernel, if we can tell.
pub fn quota_missing(root: &Path, fs: FsType) -> Option<String> {
    match fs {
        FsType::Xfs => {
            // fs/xfs/xfs_stats.c creates /proc/fs/xfs/xqmstat only with CONFIG_XFS_QUOTA; the
            // generic /proc/sys/fs/quota exists whenever CONFIG_QUOTA is set, even without
            // XFS quota (as on the machines disktier is developed on), so it is not the test.
            if root.join("proc/fs/xfs/xqmstat").exists() {
                None
            } else if root.join("proc/fs/xfs").exists()
                || config_option(root, "CONFIG_XFS_QUOTA") == Some(false)
            {
                Some("no /proc/fs/xfs/xqmstat: CONFIG_XFS_QUOTA is not set".into())
            } else {
                None
            }
        }
        FsType::Ext4 => {
            if !root.join("proc/sys/fs/quota").exists() {
                Some("no /proc/sys/fs/quota: CONFIG_QUOTA is not set".into())
            } else if config_option(root, "CONFIG_QFMT_V2") == Some(false) {
                // ext4 refuses quota options without the v2 quota format ("The kernel was not
                // built with CONFIG_QUOTA and CONFIG_QFMT_V2").
                Some("CONFIG_QFMT_V2 is not set (ext4 quotas need it)".into())
            } else {
                None
            }
        }
    }
}

/// The kernel options `fs`'s quotas need, as the fix of a refusal names them: xfs's own quota
/// code (CONFIG_XFS_QUOTA), ext4's the v2 quota format (CONFIG_QFMT_V2), both the generic
/// CONFIG_QUOTA. Found by QA: an ext4 refusal for want of CONFIG_QFMT_V2 said to use a kernel
/// with CONFIG_QUOTA/XFS_QUOTA, which this kernel has half of and ext4 does not use.
pub fn quota_needs(fs: FsType) -> &'static str {
    match fs {
        FsType::Xfs => "CONFIG_QUOTA/XFS_QUOTA",
        FsType::Ext4 => "CONFIG_QUOTA/QFMT_V2",
    }
}

impl Kernel {
    pub fn read(root: &Path, fs: FsType) -> Kernel {
        Kernel {
            md: md_available(root),
            // The selinuxfs `enforce` file exists whenever SELinux is enabled (enforcing or
            // permissive); labels matter in both.
            selinux: root.join("sys/fs/selinux/enforce").exists(),
            no_quota: quota_missing(root, fs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_detection_from_a_tree() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        assert_eq!(
            quota_missing(r, FsType::Xfs),
            None,
            "nothing known: do not refuse"
        );
        std::fs::create_dir_all(r.join("proc/fs/xfs")).unwrap();
        assert!(quota_missing(r, FsType::Xfs).unwrap().contains("xqmstat"));
        std::fs::write(r.join("proc/fs/xfs/xqmstat"), "").unwrap();
        assert_eq!(quota_missing(r, FsType::Xfs), None);
        assert!(quota_missing(r, FsType::Ext4)
            .unwrap()
            .contains("CONFIG_QUOTA"));
        assert!(is_quota_option("prjquota") && is_quota_option("usrjquota=aquota.user"));
        // Found by QA: `PRJQUOTA` passed the quota check and failed the mount after mkfs.
        assert!(is_quota_option("PRJQUOTA") && is_quota_option("PQuota"));
        assert!(!is_quota_option("noatime"));
    }

    #[test]
    fn md_detection_from_a_tree() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        assert!(!md_available(r));
        std::fs::create_dir_all(r.join("proc/sys/kernel")).unwrap();
        std::fs::write(r.join("proc/sys/kernel/osrelease"), "6.1.0\n").unwrap();
        let d = r.join("lib/modules/6.1.0/kernel/drivers/md");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("md-mod.ko.xz"), "").unwrap();
        assert!(md_available(r));
    }

    #[test]
    fn this_kernel_matches_what_a_mount_would_say() {
        // On this kernel the answer must agree with /proc/config.gz when it is readable.
        let root = Path::new("/");
        if let Some(xq) = config_option(root, "CONFIG_XFS_QUOTA") {
            if root.join("proc/fs/xfs").exists() {
                assert_eq!(quota_missing(root, FsType::Xfs).is_none(), xq);
            }
        }
        if let Some(md) = config_option(root, "CONFIG_MD") {
            if md && config_option(root, "CONFIG_BLK_DEV_MD") == Some(true) {
                assert!(md_available(root));
            }
        }
    }
}
