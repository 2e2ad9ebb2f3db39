//! The owner (`user:group`, names looked up in the node's files) and mode of the mount point.

use super::{invalid, Invalid};
use serde::{Serialize, Serializer};
use std::fmt;
use std::path::Path;

/// The largest uid or gid: 4294967295 is `(uid_t) -1`, which chown(2) reads as "leave it
/// unchanged", so a chown to it does nothing (chown(2), "If the owner or group is specified as
/// -1, then that ID is not changed").
pub const MAX_ID: u32 = u32::MAX - 1;

/// A user or group: a name (`[A-Za-z_][A-Za-z0-9_.-]*`, at most 32 bytes, as useradd(8)
/// allows) or a numeric id up to [`MAX_ID`].
fn name_or_id_ok(s: &str) -> bool {
    if s.is_empty() || s.len() > 32 {
        return false;
    }
    if s.chars().all(|c| c.is_ascii_digit()) {
        return s.parse::<u32>().is_ok_and(|n| n <= MAX_ID);
    }
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// `USER` or `USER:GROUP`, names or numeric ids. Whether the names exist is checked where the
/// node is known (`setup`, see [`Owner::check_exists`]); `render` targets another node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub user: String,
    pub group: Option<String>,
}

impl Owner {
    pub fn parse(flag: &'static str, raw: &str) -> Result<Owner, Invalid> {
        let (u, g) = match raw.split_once(':') {
            Some((u, g)) => (u, Some(g)),
            None => (raw, None),
        };
        if name_or_id_ok(u) && g.is_none_or(name_or_id_ok) {
            Ok(Owner {
                user: u.to_string(),
                group: g.map(str::to_string),
            })
        } else if std::iter::once(u)
            .chain(g)
            .any(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) && !name_or_id_ok(p))
        {
            Err(invalid(
                flag,
                raw,
                format!("a numeric id is at most {MAX_ID} (4294967295 is -1, which chown reads as \"leave unchanged\"): pass a real uid:gid"),
            ))
        } else {
            Err(invalid(
                flag,
                raw,
                "write USER or USER:GROUP (names of letters, digits, _ . - or numeric ids), e.g. ec2-user:ec2-user",
            ))
        }
    }

    /// uid and gid on this machine. `root` is `/` for the node itself, where the system's user
    /// database (NSS: files, LDAP, ...) answers; any other root is a fixture tree, whose
    /// etc/passwd and etc/group answer. Errors name what does not exist.
    pub fn check_exists(&self, flag: &'static str, root: &Path) -> Result<(u32, u32), Invalid> {
        let raw = self.to_string();
        let user = lookup_user(root, &self.user).ok_or_else(|| {
            invalid(
                flag,
                &raw,
                format!(
                    "there is no user {:?} on this node: create it first or pass a numeric id",
                    self.user
                ),
            )
        })?;
        let gid = match &self.group {
            None => user.1.ok_or_else(|| {
                invalid(flag, &raw, "a numeric user has no primary group: pass USER:GROUP")
            })?,
            Some(g) => lookup_group(root, g).ok_or_else(|| {
                invalid(flag, &raw, format!("there is no group {g:?} on this node: create it first or pass a numeric id"))
            })?,
        };
        Ok((user.0, gid))
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.group {
            Some(g) => write!(f, "{}:{g}", self.user),
            None => f.write_str(&self.user),
        }
    }
}

impl Serialize for Owner {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// (uid, primary gid if known) for a name or numeric id.
fn lookup_user(root: &Path, name: &str) -> Option<(u32, Option<u32>)> {
    if let Ok(n) = name.parse::<u32>() {
        return Some((n, None));
    }
    if root == Path::new("/") {
        // getpwnam_r(3) through NSS (files, LDAP, ...).
        return uzers::get_user_by_name(name).map(|u| (u.uid(), Some(u.primary_group_id())));
    }
    file_lookup(root, "etc/passwd", name, |f| {
        Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()))
    })
}

fn lookup_group(root: &Path, name: &str) -> Option<u32> {
    if let Ok(n) = name.parse::<u32>() {
        return Some(n);
    }
    if root == Path::new("/") {
        // getgrnam_r(3) through NSS.
        return uzers::get_group_by_name(name).map(|g| g.gid());
    }
    file_lookup(root, "etc/group", name, |f| f.get(2)?.parse().ok())
}

/// What `read` takes from the first line of a fixture tree's `db` (`etc/passwd`, `etc/group`:
/// fields separated by `:`, the name first) that is `name`'s and that `read` can read.
fn file_lookup<R>(
    root: &Path,
    db: &str,
    name: &str,
    read: impl Fn(&[&str]) -> Option<R>,
) -> Option<R> {
    let text = std::fs::read_to_string(root.join(db)).ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f[0] == name).then(|| read(&f)).flatten()
    })
}

/// A file mode up to `7777`, written as 3 or 4 octal digits (`755`, `0750`, `0o750`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode(u32);

impl Mode {
    pub fn parse(flag: &'static str, raw: &str) -> Result<Mode, Invalid> {
        let digits = raw.strip_prefix("0o").unwrap_or(raw);
        if (3..=4).contains(&digits.len()) && digits.chars().all(|c| ('0'..='7').contains(&c)) {
            // At most 4 octal digits: 0o7777 fits.
            Ok(Mode(u32::from_str_radix(digits, 8).unwrap_or(0)))
        } else {
            Err(invalid(
                flag,
                raw,
                "write an octal mode of 3 or 4 digits, e.g. 0755",
            ))
        }
    }

    pub fn from_bits(bits: u32) -> Option<Mode> {
        (bits <= 0o7777).then_some(Mode(bits))
    }

    pub fn bits(self) -> u32 {
        self.0
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04o}", self.0)
    }
}

impl Serialize for Mode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
