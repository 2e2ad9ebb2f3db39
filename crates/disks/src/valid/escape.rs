//! Quoting for each target: fstab's octal escapes, systemd's unit-name escaping, and the
//! slugs used in file and Kubernetes object names.

use super::path::MountPath;

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
    k8s_slug_within(path, 218)
}

/// [`k8s_slug`] of at most `max` characters (at least 19: `x--` and the hash), for a name that
/// puts a prefix before it: the readable part is cut shorter, the hash of the whole path kept,
/// so names stay unique per path. With `max` 218 or more it is [`k8s_slug`].
pub fn k8s_slug_within(path: &MountPath, max: usize) -> String {
    let keep = max.saturating_sub(18).clamp(1, 200);
    let s = path.as_str().trim_start_matches('/');
    let plain = s.len() <= keep
        && s.split('/').all(|c| {
            c.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        });
    if plain {
        return s.replace('/', "-");
    }
    let readable: String = s
        .chars()
        .take(keep)
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
