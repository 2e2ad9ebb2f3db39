//! Set-up shared by the disks crate's setup and undo tests on loop devices (each test file uses
//! some of it).
#![allow(dead_code)]

use disktier_cmd::{Cmd, CmdError, CommandRunner, Output, RealRunner};
use disktier_disks::setup::SetupRequest;
use disktier_disks::valid::MountPath;
use disktier_testkit::{loop_with_mount_point, require_loop_xfs, LoopDev, Unmount};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// xfs needs a device of at least 300 MiB.
pub const XFS_SIZE: u64 = 320 << 20;

/// A blank loop device big enough for xfs and a scratch directory in /var/tmp; `None` (the test
/// is skipped) where loop devices or mkfs.xfs are missing.
pub fn xfs_loop() -> Option<(LoopDev, tempfile::TempDir)> {
    if !require_loop_xfs() {
        return None;
    }
    let dev = LoopDev::new(XFS_SIZE);
    Some((dev, tempfile::tempdir_in("/var/tmp").unwrap()))
}

/// [`xfs_loop`] with the mount point `name` in its scratch directory, unmounted on drop: bind
/// it as `let Some((dev, tmp, mnt, _guard)) = xfs_mount("m") else { return };` (the guard is
/// dropped first, the device last).
pub fn xfs_mount(name: &str) -> Option<(LoopDev, tempfile::TempDir, PathBuf, Unmount)> {
    if !require_loop_xfs() {
        return None;
    }
    Some(loop_with_mount_point(XFS_SIZE, name))
}

/// A setup request for `mount` that takes exactly `dev` (`--devices`), with every other
/// option at its default.
pub fn request_on(dev: &LoopDev, mount: impl Into<PathBuf>) -> SetupRequest {
    let mut c = SetupRequest::new(mount);
    c.devices = Some(vec![dev.path.display().to_string()]);
    c
}

pub fn mp(p: &Path) -> MountPath {
    MountPath::parse_path("--mount", p).unwrap()
}

/// A real runner that answers the first command `hit` picks with `answer` instead of running
/// it (a run killed at that step); every other command, and that one's repeats, run for real.
pub fn killed_at(
    hit: impl Fn(&Cmd) -> bool + Send + Sync,
    answer: Result<Output, CmdError>,
) -> impl CommandRunner {
    Hooked {
        hit,
        answer: Mutex::new(Some(answer)),
    }
}

struct Hooked<F> {
    hit: F,
    answer: Mutex<Option<Result<Output, CmdError>>>,
}

impl<F: Fn(&Cmd) -> bool + Send + Sync> CommandRunner for Hooked<F> {
    fn output(&self, cmd: &Cmd) -> Result<Output, CmdError> {
        let answer = if (self.hit)(cmd) {
            self.answer.lock().unwrap().take()
        } else {
            None
        };
        answer.unwrap_or_else(|| RealRunner.output(cmd))
    }
    fn has_program(&self, p: &str) -> bool {
        RealRunner.has_program(p)
    }
}
