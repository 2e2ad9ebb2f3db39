//! Parsing `/proc/self/mountinfo`: which device (major:minor or source path) is mounted where.
//!
//! We read the kernel's table directly rather than asking `findmnt`: it is what findmnt reads
//! itself, it needs no program, and fixture trees can carry one as a plain file.

use std::path::Path;

/// One mount: the fields of a mountinfo line disktier needs (see proc(5)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// `major:minor` of the mounted device (`0:N` for anonymous devices such as btrfs subvolumes).
    pub maj_min: String,
    /// The directory inside the filesystem that is mounted (`/` unless a bind mount of a subdir).
    pub root: String,
    /// Where it is mounted.
    pub mount_point: String,
    pub fstype: String,
    /// The mount source (`/dev/nvme1n1`, `tmpfs`, ...).
    pub source: String,
    /// Per-mount options (`rw,noatime`).
    pub options: String,
    /// Superblock options (`rw,attr2,inode64,prjquota`): the filesystem's own, after the
    /// source (empty when the line has none).
    pub super_options: String,
}

/// Undoes mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`); a
/// backslash not followed by three octal digits that make a byte stays as it is.
fn unescape(s: &str) -> String {
    crate::valid::fstab_unescape(s)
}

/// Parses mountinfo text; malformed lines are skipped (the kernel does not write any).
pub fn parse(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let l: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            if l.len() < 6 || r.len() < 2 {
                return None;
            }
            Some(MountEntry {
                maj_min: l[2].to_string(),
                root: unescape(l[3]),
                mount_point: unescape(l[4]),
                options: l[5].to_string(),
                fstype: r[0].to_string(),
                source: unescape(r[1]),
                super_options: r.get(2).map(|o| o.to_string()).unwrap_or_default(),
            })
        })
        .collect()
}

/// The most mountinfo text read: a node with 50,000 mounts of 300 bytes each fits. A larger
/// file is an error, not a truncated table (a missing line could hide a mounted disk).
pub const MAX_BYTES: u64 = 16 << 20;

/// Reads and parses a mountinfo file; a missing file is an empty table.
pub fn read(path: &Path) -> std::io::Result<Vec<MountEntry>> {
    use std::io::Read;
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut buf = Vec::new();
    f.take(MAX_BYTES + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB: not a mount table",
            MAX_BYTES >> 20
        )));
    }
    Ok(parse(&String::from_utf8_lossy(&buf)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_mount_table_is_an_error_not_a_hang() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("mountinfo");
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("larger than 16 MiB"), "{e}");
    }

    #[test]
    fn escapes_beyond_a_byte_are_kept_not_a_panic() {
        // Found by fuzz_mountinfo: `\777` overflowed a u8 (a panic in debug builds).
        let e = parse("1 2 3:4 / /x\\777 rw - xfs /dev/sda rw\n");
        assert_eq!(e[0].mount_point, "/x\\777");
    }

    #[test]
    fn parses_fields_and_escapes() {
        let t = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n\
                 90 27 259:3 /var/lib/containerd /var/lib/my\\040dir rw,noatime shared:5 - xfs /dev/nvme1n1 rw\n\
                 garbage\n";
        let m = parse(t);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].maj_min, "254:0");
        assert_eq!(m[0].mount_point, "/");
        assert_eq!(m[1].root, "/var/lib/containerd");
        assert_eq!(m[1].mount_point, "/var/lib/my dir");
        assert_eq!(m[1].fstype, "xfs");
        assert_eq!(m[1].source, "/dev/nvme1n1");
        assert_eq!(m[1].options, "rw,noatime");
        assert_eq!(m[0].super_options, "rw,discard");
        assert_eq!(m[1].super_options, "rw");
    }
}
