//! The owner (`user:group`, names looked up in the node's files) and mode of the mount point.

use super::{invalid, Invalid};
use serde::{Serialize, Serializer};
use std::fmt;
use std::path::Path;

/// A user or group: a name (`[A-Za-z_][A-Za-z0-9_.-]*`, at most 32 bytes, as useradd(8)
/// allows) or a numeric id.
fn name_or_id_ok(s: &str) -> bool {
    if s.is_empty() || s.len() > 32 {
        return false;
    }
    if s.chars().all(|c| c.is_ascii_digit()) {
        return s.parse::<u32>().is_ok();
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
        let c = std::ffi::CString::new(name).ok()?;
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut buf = vec![0 as libc::c_char; 16 * 1024];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: getpwnam_r writes into `pwd` and `buf`, both valid for the lengths given;
        // `result` is null or points at `pwd`.
        let rc = unsafe {
            libc::getpwnam_r(
                c.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            )
        };
        return (rc == 0 && !result.is_null()).then_some((pwd.pw_uid, Some(pwd.pw_gid)));
    }
    let text = std::fs::read_to_string(root.join("etc/passwd")).ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 3 && f[0] == name)
            .then(|| Some((f[2].parse().ok()?, f[3].parse().ok())))
            .flatten()
    })
}

fn lookup_group(root: &Path, name: &str) -> Option<u32> {
    if let Ok(n) = name.parse::<u32>() {
        return Some(n);
    }
    if root == Path::new("/") {
        let c = std::ffi::CString::new(name).ok()?;
        let mut grp: libc::group = unsafe { std::mem::zeroed() };
        let mut buf = vec![0 as libc::c_char; 64 * 1024];
        let mut result: *mut libc::group = std::ptr::null_mut();
        // SAFETY: as in lookup_user, for getgrnam_r.
        let rc = unsafe {
            libc::getgrnam_r(
                c.as_ptr(),
                &mut grp,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            )
        };
        return (rc == 0 && !result.is_null()).then_some(grp.gr_gid);
    }
    let text = std::fs::read_to_string(root.join("etc/group")).ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 2 && f[0] == name)
            .then(|| f[2].parse().ok())
            .flatten()
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
