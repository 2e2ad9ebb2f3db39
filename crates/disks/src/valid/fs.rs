//! The filesystem `setup` makes and `render`'s machinery makes at boot: one type for both.

/// The filesystem to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FsType {
    Xfs,
    Ext4,
}

impl FsType {
    /// The name mkfs, mount and blkid use (`xfs`, `ext4`).
    pub fn as_str(self) -> &'static str {
        match self {
            FsType::Xfs => "xfs",
            FsType::Ext4 => "ext4",
        }
    }
    /// Longest label the filesystem stores: xfs 12 bytes (xfs_admin(8)), ext4 16 (e2label(8)).
    pub fn max_label(self) -> usize {
        match self {
            FsType::Xfs => 12,
            FsType::Ext4 => 16,
        }
    }
}
