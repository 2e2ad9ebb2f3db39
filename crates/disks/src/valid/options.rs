//! Mount options: a comma-separated list of known-safe options.

use super::{has_control, invalid, Invalid, PATH_MAX};
use serde::{Serialize, Serializer};
use std::fmt;

/// The mount options every disktier mount starts with: `noatime` saves a metadata write per read
/// (EKS's local disk setup mounts with `defaults,noatime`). Another atime option of the user's
/// ([`ATIME_OPTIONS`]) replaces the `noatime`.
pub const DEFAULT_OPTIONS: [&str; 2] = ["defaults", "noatime"];

/// The options that choose how access times are kept (mount(8)). The kernel does not read them
/// in order: `noatime` wins over `relatime` wherever it stands (found by QA: `--options
/// relatime` mounted noatime), so the default `noatime` goes when the user gives another one.
pub const ATIME_OPTIONS: [&str; 6] = [
    "atime",
    "noatime",
    "relatime",
    "norelatime",
    "strictatime",
    "nostrictatime",
];

fn is_atime(o: &str) -> bool {
    ATIME_OPTIONS.contains(&o)
}

/// One mount option as mount(8) and fstab(5) read them: `NAME` or `NAME=VALUE`. NAME starts
/// with a letter or digit and holds letters, digits, `_ . -` (`x-systemd.device-timeout`);
/// VALUE holds letters, digits and `_ . - : / @ +` (`uid=1000`, `sunit=512`,
/// `context=system_u:object_r:container_file_t:s0`). No comma, quote, blank, `%`, `$` or `\`:
/// the option string goes unquoted into fstab and a unit's `Options=`.
fn check_option(flag: &'static str, opt: &str) -> Result<(), Invalid> {
    const MAX: usize = 256;
    if opt.len() > MAX {
        return Err(invalid(
            flag,
            opt,
            format!("an option is longer than {MAX} bytes"),
        ));
    }
    let (name, value) = match opt.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (opt, None),
    };
    let name_ok = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    let value_ok = value.is_none_or(|v| {
        !v.is_empty()
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-:/@+".contains(c))
    });
    if !name_ok || !value_ok {
        return Err(invalid(
            flag,
            opt,
            "a mount option is NAME or NAME=VALUE with letters, digits and _ . - (values also : / @ +), e.g. prjquota or uid=1000",
        ));
    }
    if let Some(op) = OPERATIONS.iter().find(|op| name.eq_ignore_ascii_case(op)) {
        // Found by QA: `--options remount` passed, setup made the filesystem, and the mount
        // failed ("mount point not mounted") at every run.
        return Err(invalid(
            flag,
            opt,
            format!("{op} is not a mount option but a mount(8) operation (what to mount, or how), and disktier mounts the filesystem itself: drop it"),
        ));
    }
    let lower = name.to_ascii_lowercase();
    let known = |n: &str| KNOWN_LOWERCASE.contains(&n) || QUOTA_OPTIONS.contains(&n);
    if lower != name && known(&lower) {
        // The kernel and mount(8) match option names case-sensitively: `PRJQUOTA` would pass
        // every check here and then fail the mount, after mkfs.
        return Err(invalid(
            flag,
            opt,
            format!("mount options are case-sensitive: write {lower}"),
        ));
    }
    Ok(())
}

/// What mount(8) reads in `-o` as an operation rather than a filesystem's option (mount(8):
/// `bind`, `rbind`, `move`, `remount`; `loop` and its `offset`/`sizelimit` set up a loop device
/// over the source): in fstab, a unit's `Options=` or setup's `mount -o` they would mount
/// something else than the filesystem made, or nothing.
const OPERATIONS: &[&str] = &[
    "bind",
    "rbind",
    "move",
    "remount",
    "loop",
    "offset",
    "sizelimit",
];

/// Mount options that need kernel quota support (xfs(5), ext4(5)).
pub const QUOTA_OPTIONS: &[&str] = &[
    "quota",
    "usrquota",
    "grpquota",
    "prjquota",
    "uquota",
    "gquota",
    "pquota",
    "qnoenforce",
    "uqnoenforce",
    "gqnoenforce",
    "pqnoenforce",
];

/// Option names mount(8), xfs(5) and ext4(5) spell in lowercase (and [`QUOTA_OPTIONS`]): one written in another case is
/// a mistake the kernel would only report at mount time.
const KNOWN_LOWERCASE: &[&str] = &[
    "defaults",
    "ro",
    "rw",
    "suid",
    "nosuid",
    "dev",
    "nodev",
    "exec",
    "noexec",
    "atime",
    "noatime",
    "relatime",
    "norelatime",
    "strictatime",
    "nostrictatime",
    "diratime",
    "nodiratime",
    "sync",
    "async",
    "dirsync",
    "lazytime",
    "nolazytime",
    "auto",
    "noauto",
    "nofail",
    "user",
    "nouser",
    "users",
    "owner",
    "group",
    "discard",
    "nodiscard",
    "noquota",
    "usrjquota",
    "grpjquota",
    "jqfmt",
    "inode64",
    "inode32",
    "largeio",
    "nolargeio",
    "barrier",
    "nobarrier",
    "data",
    "commit",
    "errors",
    "context",
    "fscontext",
    "defcontext",
    "rootcontext",
];

/// Mount options: [`DEFAULT_OPTIONS`] (without its `noatime` when the user gave another atime
/// option) followed by each option the user added, once, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountOptions(Vec<String>);

impl MountOptions {
    /// Parses `--options` values (each may hold several, comma-separated; blanks around commas
    /// are ignored, an empty entry is refused: [`super::comma_items`]).
    pub fn parse(flag: &'static str, raw: &[String]) -> Result<MountOptions, Invalid> {
        let mut given: Vec<&str> = Vec::new();
        let total: usize = raw.iter().map(String::len).sum();
        if total > PATH_MAX {
            return Err(invalid(
                flag,
                &raw.join(","),
                format!("the options are longer than {PATH_MAX} bytes"),
            ));
        }
        for chunk in raw {
            if has_control(chunk) {
                return Err(invalid(
                    flag,
                    chunk,
                    "it contains a control character (newline, tab, NUL, ...): pass options separated by commas",
                ));
            }
        }
        let items = super::comma_items(flag, raw)?;
        for o in &items {
            check_option(flag, o)?;
            given.push(o);
        }
        // A `noatime` of the user's is the default's: it stays first, given once.
        let defaults = if given.iter().any(|o| is_atime(o) && *o != "noatime") {
            &DEFAULT_OPTIONS[..1]
        } else {
            &DEFAULT_OPTIONS[..]
        };
        let mut opts: Vec<String> = defaults.iter().map(|s| s.to_string()).collect();
        for o in given {
            if !opts.iter().any(|x| x == o) {
                opts.push(o.to_string());
            }
        }
        Ok(MountOptions(opts))
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    /// The options beyond the defaults (what `--options` repeats them with): a `noatime` is one
    /// of them when another atime option stands beside it, as the user gave it.
    pub fn extra(&self) -> Vec<&str> {
        let other_atime = self.iter().any(|o| is_atime(o) && o != "noatime");
        self.iter()
            .filter(|o| *o != "defaults" && (other_atime || *o != "noatime"))
            .collect()
    }

    /// A copy without `name` (setup drops `nofail` from the live mount).
    pub fn without(&self, name: &str) -> MountOptions {
        MountOptions(self.0.iter().filter(|o| *o != name).cloned().collect())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|o| o == name)
    }

    /// `defaults,noatime,...`: the form fstab, `mount -o` and `Options=` take.
    pub fn joined(&self) -> String {
        self.0.join(",")
    }
}

impl Serialize for MountOptions {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl Default for MountOptions {
    fn default() -> Self {
        MountOptions(DEFAULT_OPTIONS.iter().map(|s| s.to_string()).collect())
    }
}

impl fmt::Display for MountOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.joined())
    }
}
