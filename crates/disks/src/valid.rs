//! The values a user gives that end up in a shell script, an fstab line, a systemd unit or a
//! manifest — mount point, bind directories, mount options, owner, mode and filesystem label —
//! parsed once into types that can only hold what every one of those targets can carry. `setup`
//! and `render` both build their configuration from these types, and every writer takes them,
//! never a raw string; each writer then quotes for its own target with the functions at the end
//! of this module ([`fstab_escape`], [`unit_escape_path`], `disktier_cmd::shell_quote`, serde
//! for YAML).
//!
//! The rule (SECURITY.md, "Validated values"): a value is refused, with a message naming the
//! flag and the fix, when it holds a control character (newline, tab, NUL, DEL, ...), a `.` or
//! `..` component, or a character outside the small alphabet below. Nothing is silently dropped
//! or rewritten except trailing and doubled slashes.

use serde::{Serialize, Serializer};
use std::fmt;
use std::ops::Deref;
use std::path::Path;

/// A value that cannot be used, with the flag it came from and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{flag} {value:?} is not usable: {why}")]
pub struct Invalid {
    pub flag: &'static str,
    /// Shown with `{:?}`, so a newline or NUL is visible as `\n` / `\0`.
    pub value: String,
    pub why: String,
}

fn invalid(flag: &'static str, value: &str, why: impl Into<String>) -> Invalid {
    // Cap what an error message echoes back: the input may be huge.
    let value = if value.len() > 200 {
        let mut end = 200;
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &value[..end])
    } else {
        value.to_string()
    };
    Invalid {
        flag,
        value,
        why: why.into(),
    }
}

/// PATH_MAX and NAME_MAX of Linux (limits.h).
const PATH_MAX: usize = 4095;
const NAME_MAX: usize = 255;

/// The characters a directory name may hold: letters, digits, `- _ . + @ :` and space. Space is
/// the one that needs quoting (shell `'...'`, fstab `\040`, unit names `\x20`); the rest mean
/// nothing to a shell, fstab, systemd (no `%` specifier, no `\` escape, no `$` variable) or YAML.
fn path_char_ok(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_.+@: ".contains(c)
}

fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

/// An absolute, normalised directory path: `/` followed by one or more components, no `.` or
/// `..`, no doubled or trailing slash, no control character, only [`path_char_ok`] characters,
/// and never `/` itself.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MountPath(String);

impl MountPath {
    /// Parses what the user gave for `flag` (`--mount`, `--bind`, ...).
    pub fn parse(flag: &'static str, raw: &str) -> Result<MountPath, Invalid> {
        if raw.is_empty() {
            return Err(invalid(
                flag,
                raw,
                "it is empty: pass a directory such as /var/lib/containers",
            ));
        }
        if has_control(raw) {
            return Err(invalid(
                flag,
                raw,
                "it contains a control character (newline, tab, NUL, ...): pass a plain directory path",
            ));
        }
        if raw.len() > PATH_MAX {
            return Err(invalid(
                flag,
                raw,
                format!("it is longer than {PATH_MAX} bytes"),
            ));
        }
        if !raw.starts_with('/') {
            return Err(invalid(
                flag,
                raw,
                "it is not an absolute path: pass it starting with /, e.g. /var/lib/containers",
            ));
        }
        let parts: Vec<&str> = raw.split('/').filter(|p| !p.is_empty()).collect();
        if parts.is_empty() {
            return Err(invalid(
                flag,
                raw,
                "it is the root filesystem: pass a directory such as /var/lib/containers",
            ));
        }
        for p in &parts {
            if *p == "." || *p == ".." {
                return Err(invalid(
                    flag,
                    raw,
                    "it has a . or .. component: pass the resolved path",
                ));
            }
            if p.len() > NAME_MAX {
                return Err(invalid(
                    flag,
                    raw,
                    format!("a component is longer than {NAME_MAX} bytes"),
                ));
            }
            if !p.chars().all(path_char_ok) {
                return Err(invalid(
                    flag,
                    raw,
                    "use only letters, digits, space and - _ . + @ : in directory names",
                ));
            }
        }
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

    pub fn as_str(&self) -> &str {
        &self.0
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

impl Deref for MountPath {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<Path> for MountPath {
    fn as_ref(&self) -> &Path {
        self.as_path()
    }
}

impl fmt::Display for MountPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for MountPath {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

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

/// The mount options every disktier mount starts with: `noatime` saves a metadata write per read
/// (EKS's local disk setup mounts with `defaults,noatime`).
pub const DEFAULT_OPTIONS: [&str; 2] = ["defaults", "noatime"];

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
    Ok(())
}

/// Mount options: [`DEFAULT_OPTIONS`] followed by each option the user added, once, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountOptions(Vec<String>);

impl MountOptions {
    /// Parses `--options` values (each may hold several, comma-separated; blanks around commas
    /// and empty entries are ignored).
    pub fn parse(flag: &'static str, raw: &[String]) -> Result<MountOptions, Invalid> {
        let mut opts: Vec<String> = DEFAULT_OPTIONS.iter().map(|s| s.to_string()).collect();
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
            for o in chunk.split(',').map(str::trim).filter(|o| !o.is_empty()) {
                check_option(flag, o)?;
                if !opts.iter().any(|x| x == o) {
                    opts.push(o.to_string());
                }
            }
        }
        Ok(MountOptions(opts))
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    /// The options beyond the defaults (what `--options` repeats them with).
    pub fn extra(&self) -> Vec<&str> {
        self.iter()
            .filter(|o| !DEFAULT_OPTIONS.contains(o))
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

/// A filesystem label (and md array name): letters, digits, `-` and `_`, not starting with `-`
/// (it follows `-L` on mkfs's command line), at most `max` bytes — 12 for xfs (xfs_admin(8)),
/// 16 for ext4 (e2label(8)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label(String);

impl Label {
    /// `fs` names the filesystem in the error; `suffix` is the length a layout adds (`-N` of
    /// `--layout separate`), explained by `suffix_why`.
    pub fn parse(
        flag: &'static str,
        raw: &str,
        fs: &str,
        max: usize,
        suffix: usize,
        suffix_why: &str,
    ) -> Result<Label, Invalid> {
        if raw.is_empty() {
            return Err(invalid(
                flag,
                raw,
                "it is empty: pass a label such as disktier",
            ));
        }
        if raw.starts_with('-')
            || !raw
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(invalid(
                flag,
                raw,
                "use only letters, digits, - and _ (not starting with -)",
            ));
        }
        if raw.len() + suffix > max {
            return Err(invalid(
                flag,
                raw,
                format!("{fs} holds at most {max} characters{suffix_why}: pass a shorter label"),
            ));
        }
        Ok(Label(raw.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Label {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Label {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

// ---- quoting per target -------------------------------------------------------------------

/// An fstab field (fstab(5)): blanks and backslash as octal escapes (`\040`, `\011`, `\012`,
/// `\134`), the form the kernel's mountinfo uses too.
pub fn fstab_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            ' ' => out.push_str("\\040"),
            '\t' => out.push_str("\\011"),
            '\n' => out.push_str("\\012"),
            '\\' => out.push_str("\\134"),
            c => out.push(c),
        }
    }
    out
}

/// The inverse of [`fstab_escape`] (and of mountinfo's escapes): `\NNN` octal to the byte.
pub fn fstab_unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 4 <= b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if let Ok(byte) = u8::try_from(v) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `systemd-escape --path PATH` (systemd.unit(5), "String Escaping for Inclusion in Unit
/// Names"): strip the slashes at both ends, `/` becomes `-`, and every byte other than ASCII
/// letters, digits, `:`, `_` and a non-leading `.` becomes `\xNN`. The only name systemd accepts
/// for the mount unit of that path.
pub fn unit_escape_path(path: &str) -> String {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return "-".to_string();
    }
    let mut out = String::new();
    for (i, b) in trimmed.bytes().enumerate() {
        match b {
            b'/' => out.push('-'),
            b'.' if i > 0 => out.push('.'),
            b if b.is_ascii_alphanumeric() || b == b':' || b == b'_' => out.push(b as char),
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// The inverse of [`unit_escape_path`] (`systemd-escape --unescape --path`).
pub fn unit_unescape_path(name: &str) -> String {
    if name == "-" {
        return "/".into();
    }
    let b = name.as_bytes();
    let mut out = vec![b'/'];
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'-' => out.push(b'/'),
            b'\\'
                if i + 4 <= b.len()
                    && b[i + 1] == b'x'
                    && b[i + 2].is_ascii_hexdigit()
                    && b[i + 3].is_ascii_hexdigit() =>
            {
                let hex = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
                out.push(hex(b[i + 2]) * 16 + hex(b[i + 3]));
                i += 4;
                continue;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A file-name form of a path, unique per path and stable: the components joined with `-`,
/// and, when that could be ambiguous (a component holds `-`) or the path holds a character
/// other than letters, digits, `_` and `.`, those replaced by `_` and `+` plus 16 hex digits of
/// a hash of the whole path appended. `+` never occurs in a plain slug, so a plain slug never
/// equals a hashed one; plain slugs are unique because `-` only separates components. The
/// result is a valid file name, [`MountPath`] component and unit-name part.
/// `/var/lib/containers` -> `var-lib-containers`; `/mnt/k8s-disks/0` -> `mnt-k8s_disks-0+…`.
pub fn file_slug(path: &MountPath) -> String {
    let s = path.as_str().trim_start_matches('/');
    let plain = s.split('/').all(|c| {
        c.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    });
    let readable: String = s
        .chars()
        .map(|c| match c {
            '/' => '-',
            c if c.is_ascii_alphanumeric() || c == '_' || c == '.' => c,
            _ => '_',
        })
        .collect();
    if plain {
        readable
    } else {
        // FNV-1a 64: stable and dependency-free; collisions only matter between two paths
        // on one node.
        format!("{readable}+{:016x}", fnv64(path.as_str()))
    }
}

fn fnv64(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// A Kubernetes object-name form of a path (RFC 1123 subdomain: lowercase letters, digits, `-`
/// and `.`, at most 253 characters), unique per path: the components joined with `-` when each
/// is lowercase letters and digits only, else a lowercased readable form plus `--` and 16 hex
/// digits of a hash (`--` never occurs in a plain one).
pub fn k8s_slug(path: &MountPath) -> String {
    let s = path.as_str().trim_start_matches('/');
    let plain = s.len() <= 200
        && s.split('/').all(|c| {
            c.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        });
    if plain {
        return s.replace('/', "-");
    }
    let readable: String = s
        .chars()
        .take(200)
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() => c.to_ascii_lowercase(),
            _ => '-',
        })
        .collect();
    let readable = readable.trim_matches('-');
    let h = fnv64(path.as_str());
    if readable.is_empty() {
        format!("x--{h:016x}")
    } else {
        format!("{readable}--{h:016x}")
    }
}

/// Is `path` a kernel device name directly under /dev (`/dev/nvme0n1`, `/dev/sdb`, `/dev/loop3`,
/// `/dev/md0`)? Those are assigned at boot in discovery order and can name another disk after a
/// reboot; only the /dev/disk/by-* links (and filesystem UUIDs) are stable.
pub fn is_kernel_device_name(path: &str) -> bool {
    match path.strip_prefix("/dev/") {
        Some(rest) => !rest.is_empty() && !rest.contains('/'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_paths_are_normalised_or_refused() {
        assert_eq!(
            MountPath::parse("--mount", "/var//lib/x/").unwrap(),
            "/var/lib/x"
        );
        for bad in [
            "",
            "/",
            "//",
            "rel",
            "/a/../b",
            "/a/./b",
            "/a\nb",
            "/a\0b",
            "/a\tb",
            "/a\u{7f}",
            "/a\u{85}b",
            "/a$b",
            "/a'b",
            "/a\\b",
            "/a%b",
            "/ü",
        ] {
            assert!(MountPath::parse("--mount", bad).is_err(), "{bad:?}");
        }
        let e = MountPath::parse("--mount", "/mnt/a\nEOF")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--mount \"/mnt/a\\nEOF\"") && e.contains("control character"),
            "{e}"
        );
        assert!(MountPath::parse("--mount", &format!("/{}", "a".repeat(300))).is_err());
    }

    #[test]
    fn options_follow_the_grammar() {
        let o = MountOptions::parse(
            "--options",
            &[
                "prjquota, uid=1000".into(),
                "x-systemd.device-timeout=5s".into(),
            ],
        )
        .unwrap();
        assert_eq!(
            o.joined(),
            "defaults,noatime,prjquota,uid=1000,x-systemd.device-timeout=5s"
        );
        for bad in [
            "a\nb", "a b", "a=", "=b", "a='b'", "a%b", "a$b", "-x", "a=b,c\\d", "a\"b",
        ] {
            assert!(
                MountOptions::parse("--options", &[bad.into()]).is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn owners_labels_modes() {
        assert!(Owner::parse("--owner", "ec2-user:ec2-user").is_ok());
        assert!(Owner::parse("--owner", "1000:1000").is_ok());
        for bad in [
            "",
            ":",
            "a:",
            "root;rm",
            "a b",
            "-x",
            "a\n",
            "99999999999",
            "a:b:c",
        ] {
            assert!(Owner::parse("--owner", bad).is_err(), "{bad:?}");
        }
        assert_eq!(Mode::parse("--mode", "750").unwrap().to_string(), "0750");
        assert!(Mode::parse("--mode", "99999").is_err());
        assert!(Label::parse("--label", "-L", "xfs", 12, 0, "").is_err());
        assert!(Label::parse("--label", "thirteenchars", "xfs", 12, 0, "").is_err());
        assert!(Label::parse("--label", "data_1", "xfs", 12, 0, "").is_ok());
    }

    #[test]
    fn owners_exist_in_fixture_files() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("etc")).unwrap();
        std::fs::write(
            t.path().join("etc/passwd"),
            "ec2-user:x:1000:1001::/h:/bin/sh\n",
        )
        .unwrap();
        std::fs::write(t.path().join("etc/group"), "ec2-user:x:1001:\n").unwrap();
        let o = Owner::parse("--owner", "ec2-user").unwrap();
        assert_eq!(o.check_exists("--owner", t.path()).unwrap(), (1000, 1001));
        let o = Owner::parse("--owner", "nobody:ec2-user").unwrap();
        assert!(o
            .check_exists("--owner", t.path())
            .unwrap_err()
            .to_string()
            .contains("no user"));
        // The real node: root exists everywhere.
        let o = Owner::parse("--owner", "root:root").unwrap();
        assert_eq!(o.check_exists("--owner", Path::new("/")).unwrap(), (0, 0));
    }

    #[test]
    fn symlinked_directories_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, t.path().join("link")).unwrap();
        let p = |s: &str| MountPath::parse_path("--mount", &t.path().join(s)).unwrap();
        assert!(p("real/new/dir").check_no_symlink("--mount").is_ok());
        let e = p("link/x")
            .check_no_symlink("--mount")
            .unwrap_err()
            .to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(p("link").check_no_symlink("--mount").is_err());
    }

    #[test]
    fn escapes_round_trip() {
        for p in ["/a b/c", "/mnt/k8s-disks/0", "/.x/y", "/a:b/c_d/e.f"] {
            assert_eq!(fstab_unescape(&fstab_escape(p)), p);
            assert_eq!(unit_unescape_path(&unit_escape_path(p)), p);
        }
    }

    #[test]
    fn slugs_are_unique() {
        let s = |p: &str| file_slug(&MountPath::parse("--mount", p).unwrap());
        assert_eq!(s("/var/lib/containers"), "var-lib-containers");
        assert_ne!(s("/a-b"), s("/a/b"));
        assert_ne!(s("/a b"), s("/a_b"));
        assert!(s("/mnt/k8s-disks/0").starts_with("mnt-k8s_disks-0+"));
        let k = |p: &str| k8s_slug(&MountPath::parse("--mount", p).unwrap());
        assert_eq!(k("/var/lib/containers"), "var-lib-containers");
        assert_ne!(k("/a-b"), k("/a/b"));
        assert!(k("/Data_x/Y").starts_with("data-x-y--"));
    }
}
