//! The checks a disk that already holds disktier's filesystem must pass before it is used
//! again: mounted only where this setup puts it, made by setup for this mount point, of the
//! filesystem type asked for.

use super::planner::Planner;
use super::state::{derived_uuid, is_derived_form};
use crate::discover::Disk;
use crate::setup::persist;
use crate::setup::SetupError;
use crate::valid::MountPath;

impl Planner<'_> {
    /// Checks that a disk holding our filesystem is mounted nowhere but where we put things.
    pub(super) fn check_mounted_only_at(
        &self,
        d: &Disk,
        target: &MountPath,
    ) -> Result<(), SetupError> {
        let allowed: Vec<&str> = std::iter::once(target.as_str())
            .chain(self.cfg.bind.iter().map(MountPath::as_str))
            .collect();
        if let Some(other) = d
            .mountpoints
            .iter()
            .find(|m| !allowed.contains(&m.as_str()))
        {
            // A bind of this setup's filesystem (its source, MOUNT/<the directory's full path>,
            // lies on the same device) that --bind no longer lists (found by QA: it advised
            // `--mount` of the bind directory).
            let bind_of_ours = self.node.mounts.iter().any(|m| {
                m.mount_point == *other
                    && m.maj_min == d.maj_min
                    && m.root != "/"
                    && m.root == m.mount_point
            });
            if bind_of_ours {
                return Err(SetupError::Config(format!(
                    "{other} is one of this setup's binds (of {target}{other}) that --bind no longer lists: unmount it (umount {other}) and remove its persisted line or unit (a re-run of setup drops its fstab line; its mount unit goes by hand), then re-run setup; or list it in --bind again; or undo the setup (disktier setup --undo --mount {target} --binds copy-back|keep)"
                )));
            }
            return Err(SetupError::Refused {
                device: d.best_path().to_string(),
                reasons: vec![format!(
                    "holds disktier's filesystem but is mounted at {other}, not {target}: unmount it or pass --mount {other}",
                )],
            });
        }
        Ok(())
    }

    /// One disk used directly (also each disk of `--layout separate`).
    /// Refuses a request for another filesystem type than the one an earlier setup made
    /// (found by QA: `--fs ext4` on disktier's xfs was remounted as xfs and reported as ext4).
    /// setup never reformats a filesystem it made: changing the type is undo with `--wipe`,
    /// then setup again.
    pub(super) fn check_fs(
        &self,
        device: &str,
        fstype: &str,
        target: &MountPath,
    ) -> Result<(), SetupError> {
        let want = self.cfg.fs.as_str();
        if fstype == want {
            return Ok(());
        }
        Err(SetupError::Config(format!(
            "{device} holds {fstype}, made by an earlier setup for {target}, not the {want} asked for (--fs; xfs unless given): setup never reformats it; to keep it, pass --fs {fstype}; to change it: undo with --wipe (disktier setup --undo --mount {target} --wipe), then set up again with --fs {want}"
        )))
    }

    /// Refuses a filesystem setup made for another mount point: setup derives its UUID from
    /// the label and the mount point ([`derived_uuid`]), so one with setup's form of UUID but
    /// another value was made for somewhere else (found by QA: it was remounted at the new place,
    /// where `--undo` then refused it). A UUID of another form (a filesystem labelled by `render`'s
    /// boot script or by hand) is not setup's to judge: it is used as before.
    pub(super) fn check_made_for(
        &self,
        device: &str,
        fs_label: &str,
        uuid: Option<&str>,
        target: &MountPath,
        label: &str,
    ) -> Result<(), SetupError> {
        let Some(uuid) = uuid.filter(|u| is_derived_form(u)) else {
            return Ok(());
        };
        let want = derived_uuid(label, target.as_path());
        if uuid == want {
            return Ok(());
        }
        let Some(t) = persist::persisted_target(&self.cfg.persist_root, uuid) else {
            // Found by QA: after `setup --undo` without --wipe (which leaves the filesystem, by
            // design), the refusal still said to undo that setup first, and the undo it named
            // said "nothing to undo". Mounted elsewhere it is refused before this, so all an
            // undo can still do is reverse a setup mounted here by hand.
            return Err(SetupError::Config(format!(
                "{device} holds a filesystem disktier setup made for another mount point (label {fs_label}, UUID {uuid}; for {target} it would be {want}), which is mounted nowhere else and which no fstab line or unit of setup names: a `disktier setup --undo --mount DIR` without --wipe leaves it so; if its data can go, wipe it (wipefs -a {device}) and re-run setup, or pass the --mount it was made for"
            )));
        };
        Err(SetupError::Config(format!(
            "{device} holds a filesystem disktier setup made for another mount point ({t}) (label {fs_label}, UUID {uuid}; for {target} it would be {want}): undo that setup first (disktier setup --undo --mount {t}), or, if its data can go, wipe it (wipefs -a {device}) and re-run setup"
        )))
    }
}
