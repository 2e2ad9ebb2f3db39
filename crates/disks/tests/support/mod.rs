//! Set-up shared by the disks crate's setup and undo tests on loop devices.

use disktier_disks::setup::SetupRequest;
use disktier_testkit::LoopDev;
use std::path::PathBuf;

/// A setup request for `mount` that takes exactly `dev` (`--devices`), with every other
/// option at its default.
pub fn request_on(dev: &LoopDev, mount: impl Into<PathBuf>) -> SetupRequest {
    let mut c = SetupRequest::new(mount);
    c.devices = Some(vec![dev.path.display().to_string()]);
    c
}

/// A real runner with a hook that may answer a command in its place (a crash at one step);
/// every other command runs for real.
pub struct Hooked<F>(pub F);

impl<F> disktier_cmd::CommandRunner for Hooked<F>
where
    F: Fn(&disktier_cmd::Cmd) -> Option<Result<disktier_cmd::Output, disktier_cmd::CmdError>>
        + Send
        + Sync,
{
    fn output(
        &self,
        cmd: &disktier_cmd::Cmd,
    ) -> Result<disktier_cmd::Output, disktier_cmd::CmdError> {
        (self.0)(cmd).unwrap_or_else(|| disktier_cmd::RealRunner.output(cmd))
    }
    fn has_program(&self, p: &str) -> bool {
        disktier_cmd::RealRunner.has_program(p)
    }
}
