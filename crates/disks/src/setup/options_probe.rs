//! Asks the running kernel whether it takes each filesystem option of `--options`, before
//! anything is written: an option the filesystem does not know (`bogusopt`, `size=` on xfs) was
//! found only by `mount`, after mkfs had made the filesystem (found by QA). The kernel is the
//! authority: its mount API (`fsopen(2)`, `fsconfig(2)`, Linux 5.2+) parses each parameter in
//! the filesystem's own parser when it is given, with no device and nothing mounted, so no list
//! of options is kept here that could fall behind the kernel.

use super::config::FsType;
use rustix::mount::{fsconfig_set_flag, fsconfig_set_string, fsopen, FsOpenFlags};
use std::io::Read;

/// Options that are not the filesystem's: mount(8)'s own (`nofail`, `x-systemd.*`, ...), the
/// per-mount flags the mount API sets with `mount_setattr` instead of `fsconfig`
/// (`forbidden_sb_flag` in the kernel's fs/fs_context.c refuses them there), and the SELinux
/// contexts (libmount drops them where SELinux is off).
const NOT_THE_FILESYSTEMS: &[&str] = &[
    "defaults",
    "auto",
    "noauto",
    "nofail",
    "user",
    "nouser",
    "users",
    "owner",
    "group",
    "_netdev",
    "comment",
    "context",
    "fscontext",
    "defcontext",
    "rootcontext",
    "bind",
    "dev",
    "exec",
    "nodev",
    "noexec",
    "suid",
    "nosuid",
    "atime",
    "noatime",
    "diratime",
    "nodiratime",
    "relatime",
    "norelatime",
    "strictatime",
    "nostrictatime",
    "iversion",
    "noiversion",
    "nosymfollow",
    // mount(8) sets these as the MS_SILENT flag; fsconfig refuses them (checked on 6.18).
    "silent",
    "loud",
    // libmount's own: the loop device and mount helpers.
    "loop",
    "offset",
    "sizelimit",
    "encryption",
    "helper",
    "uhelper",
];

/// The first option the kernel's `fs` refuses, with what the kernel said; `None` when each is
/// taken, or when the kernel cannot be asked (no mount API, not root, `fs` not available: then
/// `mount` decides, as before). `skip` names options checked elsewhere with a better message
/// (the quota options).
pub fn refused(
    fs: FsType,
    options: impl IntoIterator<Item = impl AsRef<str>>,
    skip: impl Fn(&str) -> bool,
) -> Option<(String, String)> {
    let fd = fsopen(fs.as_str(), FsOpenFlags::FSOPEN_CLOEXEC).ok()?;
    for o in options {
        let o = o.as_ref();
        let (key, value) = match o.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (o, None),
        };
        if skip(o)
            || key.starts_with("x-")
            || key.starts_with("X-")
            || NOT_THE_FILESYSTEMS.contains(&key)
        {
            continue;
        }
        let r = match value {
            Some(v) => fsconfig_set_string(&fd, key, v),
            None => fsconfig_set_flag(&fd, key),
        };
        if let Err(e) = r {
            return Some((o.to_string(), said(&fd).unwrap_or_else(|| e.to_string())));
        }
    }
    None
}

/// The kernel's own message about the last refusal: the fs context's log, read from its file
/// descriptor, one message per read (`e xfs: Unknown parameter 'bogusopt'`).
fn said(fd: &rustix::fd::OwnedFd) -> Option<String> {
    let mut f = std::fs::File::from(fd.try_clone().ok()?);
    let mut last = None;
    let mut buf = [0u8; 1024];
    // The log holds at most 8 messages (fs/fsopen.c): a bounded loop.
    for _ in 0..8 {
        match f.read(&mut buf) {
            Ok(n) if n > 0 => {
                let m = String::from_utf8_lossy(&buf[..n]).trim().to_string();
                last = Some(m.strip_prefix("e ").unwrap_or(&m).to_string());
            }
            _ => break,
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Skips (printing why) where the kernel cannot be asked: not root, or no mount API.
    fn can_ask() -> bool {
        let ok = fsopen("xfs", FsOpenFlags::FSOPEN_CLOEXEC).is_ok();
        if !ok {
            eprintln!("skipped: fsopen(\"xfs\") fails here (not root, or no xfs or mount API)");
        }
        ok
    }

    #[test]
    fn the_kernel_refuses_an_option_its_filesystem_does_not_know() {
        if !can_ask() {
            return;
        }
        let none = |_: &str| false;
        let (o, why) = refused(FsType::Xfs, ["defaults", "noatime", "bogusopt"], none).unwrap();
        assert_eq!(o, "bogusopt");
        assert!(why.contains("bogusopt"), "{why}");
        assert_eq!(
            refused(FsType::Xfs, ["size=99999"], none).map(|r| r.0),
            Some("size=99999".into())
        );
        // The filesystem's own options, mount(8)'s and the per-mount flags pass.
        let fine = [
            "defaults",
            "noatime",
            "nodev",
            "nosuid",
            "nofail",
            "x-systemd.device-timeout=5",
            "X-mount.mkdir",
            "silent",
            "loud",
            "ro",
            "discard",
            "logbsize=64k",
            "inode64",
            "context=system_u:object_r:container_file_t:s0",
        ];
        assert_eq!(refused(FsType::Xfs, fine, none), None);
        // The skipped ones are not asked about.
        assert_eq!(
            refused(FsType::Xfs, ["bogusopt"], |o| o == "bogusopt"),
            None
        );
    }
}
