//! The state of a disk as disktier sees it: ours (by label or md name), blank, foreign;
//! the filesystem UUID derived for a mount point; the owner's ids from the node's files.

use super::types::DevState;
use crate::discover::{Disk, Ineligible};
use std::path::Path;

/// Whether an md array name (`homehost:name` or `name`, as blkid reports it) is ours.
fn md_name_is(label: Option<&str>, ours: &str) -> bool {
    match label {
        Some(l) => l == ours || l.rsplit_once(':').is_some_and(|(_, n)| n == ours),
        None => false,
    }
}

/// `LABEL-N` -> N.
fn separate_index(label: &str, ours: &str) -> Option<usize> {
    label.strip_prefix(ours)?.strip_prefix('-')?.parse().ok()
}

/// What `d` holds for a request labelled `label`.
pub fn own_state(d: &Disk, label: &str) -> DevState {
    // A disk whose size sysfs does not give, or whose name is no plain kernel name, is not
    // taken even when it holds our filesystem.
    let hard = d.ineligible.iter().any(|r| {
        matches!(
            r,
            Ineligible::SystemDisk { .. }
                | Ineligible::ReadOnly
                | Ineligible::Partitioned { .. }
                | Ineligible::SizeUnknown { .. }
                | Ineligible::OddName { .. }
        )
    });
    if hard {
        return DevState::Refused(d.ineligible.clone());
    }
    let sig = &d.signature;
    match sig.fstype.as_deref() {
        Some("linux_raid_member") if md_name_is(sig.label.as_deref(), label) => {
            let md_holders: Vec<&String> =
                d.holders.iter().filter(|h| h.starts_with("md")).collect();
            if d.holders.len() == md_holders.len() && md_holders.len() <= 1 {
                DevState::OurMember {
                    holder: md_holders.first().map(|h| h.to_string()),
                }
            } else {
                DevState::Refused(d.ineligible.clone())
            }
        }
        Some(fs @ ("xfs" | "ext4")) => {
            let l = sig.label.clone().unwrap_or_default();
            let index = separate_index(&l, label);
            if (l == label || index.is_some()) && d.holders.is_empty() {
                DevState::OurFs {
                    fstype: fs.to_string(),
                    uuid: sig.uuid.clone(),
                    label: l,
                    index,
                }
            } else {
                DevState::Refused(d.ineligible.clone())
            }
        }
        _ if d.eligible => DevState::Blank,
        _ => DevState::Refused(d.ineligible.clone()),
    }
}

/// A filesystem UUID derived from the label and mount point: the same on every re-creation
/// (after a stop/start), so persisted units and fstab lines by UUID stay valid, and distinct
/// per mount point. 128 bits from two FNV-1a passes, stamped as an RFC 9562 version 8 UUID.
pub fn derived_uuid(label: &str, target: &Path) -> String {
    let key = format!("disktier\0{label}\0{}", target.display());
    let fnv = |seed: u64| {
        let mut h = seed;
        for b in key.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        h
    };
    let a = fnv(0xcbf29ce484222325);
    let b = fnv(a ^ 0x9e3779b97f4a7c15);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // variant 10
    let h: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Whether `uuid` has the form [`derived_uuid`] gives (version 8, variant 10): a filesystem
/// setup made. mkfs's own UUIDs are random (version 4), so no other filesystem has this form.
pub fn is_derived_form(uuid: &str) -> bool {
    let b = uuid.as_bytes();
    uuid.len() == 36
        && b[14] == b'8'
        && matches!(b[19], b'8' | b'9' | b'a' | b'b')
        && uuid.bytes().enumerate().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// uid and gid for `user:group` from ROOT/etc/passwd and ROOT/etc/group (numeric ids pass
/// through). None when a name is not in the files (NSS users): chown is then always planned.
pub fn owner_ids(root: &Path, owner: &str) -> Option<(u32, u32)> {
    let (u, g) = owner.split_once(':').unwrap_or((owner, ""));
    let passwd = std::fs::read_to_string(root.join("etc/passwd")).unwrap_or_default();
    let group = std::fs::read_to_string(root.join("etc/group")).unwrap_or_default();
    let lookup = |text: &str, name: &str, field: usize| -> Option<(u32, u32)> {
        text.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 3 && f[0] == name).then(|| {
                (
                    f[2].parse().unwrap_or(u32::MAX),
                    f[field].parse().unwrap_or(u32::MAX),
                )
            })
        })
    };
    let (uid, primary_gid) = match u.parse::<u32>() {
        Ok(n) => (n, None),
        Err(_) => {
            let (uid, gid) = lookup(&passwd, u, 3)?;
            (uid, Some(gid))
        }
    };
    let gid = if g.is_empty() {
        primary_gid?
    } else {
        match g.parse::<u32>() {
            Ok(n) => n,
            Err(_) => lookup(&group, g, 2)?.0,
        }
    };
    Some((uid, gid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_uuid_is_stable_distinct_and_well_formed() {
        let a = derived_uuid("disktier", Path::new("/var/lib/containers"));
        assert_eq!(
            a,
            derived_uuid("disktier", Path::new("/var/lib/containers"))
        );
        assert_ne!(a, derived_uuid("disktier", Path::new("/data")));
        assert_ne!(
            a,
            derived_uuid("disktier-0", Path::new("/var/lib/containers"))
        );
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "8", "version 8: {a}");
        assert!("89ab".contains(&a[19..20]), "variant: {a}");
        assert!(is_derived_form(&a));
        assert!(!is_derived_form("11111111-2222-4333-8444-555555555555"));
        assert!(!is_derived_form("not-a-uuid"));
    }

    #[test]
    fn md_names_and_separate_labels() {
        assert!(md_name_is(Some("any:disktier"), "disktier"));
        assert!(md_name_is(Some("disktier"), "disktier"));
        assert!(!md_name_is(Some("any:other"), "disktier"));
        assert_eq!(separate_index("disktier-3", "disktier"), Some(3));
        assert_eq!(separate_index("disktier", "disktier"), None);
    }

    #[test]
    fn owner_ids_from_files() {
        let t = crate::valid::tests::user_files(
            "ec2-user:x:1000:1000::/home/ec2-user:/bin/bash\n",
            "ec2-user:x:1000:\nwheel:x:10:\n",
        );
        assert_eq!(owner_ids(t.path(), "ec2-user:ec2-user"), Some((1000, 1000)));
        assert_eq!(owner_ids(t.path(), "ec2-user:wheel"), Some((1000, 10)));
        assert_eq!(owner_ids(t.path(), "ec2-user"), Some((1000, 1000)));
        assert_eq!(owner_ids(t.path(), "0:0"), Some((0, 0)));
        assert_eq!(owner_ids(t.path(), "nobody:x"), None);
    }
}
