//! The mount point: an absolute path every target (fstab, systemd unit names, shell, YAML)
//! can carry.

use super::{has_control, invalid, path_char_ok, Invalid, NAME_MAX, PATH_MAX};
use std::path::Path;

/// An absolute, normalised directory path: `/` followed by one or more components, no `.` or
/// `..`, no doubled or trailing slash, no control character, only [`path_char_ok`] characters,
/// and never `/` itself.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MountPath(String);

impl MountPath {
    /// Parses what the user gave for `flag` (`--mount`, `--bind`, ...).
    pub fn parse(flag: &'static str, raw: &str) -> Result<MountPath, Invalid> {
        let parts = components(raw).map_err(|why| invalid(flag, raw, why))?;
        Ok(MountPath(format!("/{}", parts.join("/"))))
    }

    /// Parses an OS path (non-UTF-8 is refused).
    pub fn parse_path(flag: &'static str, raw: &Path) -> Result<MountPath, Invalid> {
        match raw.to_str() {
            Some(s) => MountPath::parse(flag, s),
            None => Err(invalid(
                flag,
                &raw.to_string_lossy(),
                "it is not valid UTF-8: pass a plain directory path",
            )),
        }
    }

    pub fn as_path(&self) -> &Path {
        Path::new(&self.0)
    }

    /// `self/NAME` for a name made of digits (`--layout separate`'s `MOUNT/N`).
    pub fn join_index(&self, n: usize) -> MountPath {
        MountPath(format!("{}/{n}", self.0))
    }

    /// `self` followed by all of `other`'s components (a bind directory's copy on the new
    /// filesystem: `/mnt/disks/ssd` + `/var/lib/kubelet` = `/mnt/disks/ssd/var/lib/kubelet`).
    pub fn join_below(&self, other: &MountPath) -> MountPath {
        MountPath(format!("{}{}", self.0, other.0))
    }

    /// `self/NAME` for a name made by disktier ([`file_slug`] output, fixed prefixes): letters,
    /// digits and `- _ . +`, never `.` or `..`.
    pub fn join_name(&self, name: &str) -> MountPath {
        debug_assert!(
            !name.is_empty()
                && name != "."
                && name != ".."
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c)),
            "{name:?}"
        );
        MountPath(format!("{}/{name}", self.0))
    }

    /// Refuses a path that is, or lies below, a symbolic link on this machine: mount(8) and
    /// `mkdir -p` follow links, so `--mount /srv/x` with `/srv` a link to `/etc` would mount
    /// over `/etc`. Components that do not exist yet are fine (setup creates them).
    pub fn check_no_symlink(&self, flag: &'static str) -> Result<(), Invalid> {
        let mut at = std::path::PathBuf::from("/");
        for c in self.0.split('/').filter(|c| !c.is_empty()) {
            at.push(c);
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_symlink() => {
                    let to = std::fs::read_link(&at)
                        .map(|t| t.display().to_string())
                        .unwrap_or_default();
                    return Err(invalid(
                        flag,
                        &self.0,
                        format!(
                            "{} is a symbolic link (to {to}): pass the real directory",
                            at.display()
                        ),
                    ));
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        Ok(())
    }

    /// Why a program at this path may be gone at the next boot, if it may: it lies in a cargo
    /// `target/` directory, a temporary directory (`/tmp`, `/var/tmp`, `/dev/shm`) or a home
    /// directory, which `cargo clean`, a reboot or a checkout change empty. A boot-time unit
    /// must not run disktier from there (`setup --persist systemd`, `render openshift
    /// --use-binary`).
    pub fn transient_reason(&self) -> Option<&'static str> {
        let p = self.as_str();
        if p.split('/').any(|c| c == "target") {
            Some("it lies in a cargo target directory")
        } else if ["/tmp/", "/var/tmp/", "/dev/shm/"]
            .iter()
            .any(|d| p.starts_with(d))
        {
            Some("it lies in a temporary directory")
        } else if p.starts_with("/home/") || p.starts_with("/root/") {
            Some("it lies in a home directory")
        } else {
            None
        }
    }

    /// Whether `self` lies strictly below `other`.
    pub fn is_below(&self, other: &MountPath) -> bool {
        self.0.len() > other.0.len()
            && self.0.starts_with(&other.0)
            && self.0.as_bytes()[other.0.len()] == b'/'
    }

    /// Number of components (`/a/b` has 2), for parent-before-child ordering.
    pub fn depth(&self) -> usize {
        self.0.matches('/').count()
    }

    /// The parent directory (`/` for a top-level one).
    pub fn parent_str(&self) -> &str {
        match self.0.rfind('/') {
            Some(0) | None => "/",
            Some(i) => &self.0[..i],
        }
    }
}

/// The components of a mount path given as `raw`, or why it is not one.
fn components(raw: &str) -> Result<Vec<&str>, String> {
    if raw.is_empty() {
        return Err("it is empty: pass a directory such as /var/lib/containers".into());
    }
    if has_control(raw) {
        return Err(
            "it contains a control character (newline, tab, NUL, ...): pass a plain directory path"
                .into(),
        );
    }
    if raw.len() > PATH_MAX {
        return Err(format!("it is longer than {PATH_MAX} bytes"));
    }
    if !raw.starts_with('/') {
        return Err(
            "it is not an absolute path: pass it starting with /, e.g. /var/lib/containers".into(),
        );
    }
    let parts: Vec<&str> = raw.split('/').filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return Err(
            "it is the root filesystem: pass a directory such as /var/lib/containers".into(),
        );
    }
    for p in &parts {
        if *p == "." || *p == ".." {
            return Err("it has a . or .. component: pass the resolved path".into());
        }
        if p.len() > NAME_MAX {
            return Err(format!("a component is longer than {NAME_MAX} bytes"));
        }
        if !p.chars().all(path_char_ok) {
            return Err(
                "use only letters, digits, space and - _ . + @ : in directory names".into(),
            );
        }
    }
    Ok(parts)
}

impl AsRef<Path> for MountPath {
    fn as_ref(&self) -> &Path {
        self.as_path()
    }
}

string_newtype!(MountPath);

impl PartialEq<str> for MountPath {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for MountPath {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}
