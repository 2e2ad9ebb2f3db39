//! The steps that make a round survive a reboot: stable device names and the mount units or
//! fstab lines.

use super::planner::{given_name, units_dir, Planner};
use crate::setup::config::Persist;
use crate::setup::persist;
use crate::setup::step::Step;
use crate::setup::SetupError;

impl Planner<'_> {
    /// The `--devices` for the boot-time unit: each kernel name (`/dev/nvme1n1`, `/dev/loop3`),
    /// which can name another disk after a reboot, replaced by the disk's /dev/disk/by-id/ link,
    /// with a warning; refused when the disk has none.
    pub(super) fn stable_devices(&mut self) -> Result<Option<Vec<String>>, SetupError> {
        let Some(given) = &self.cfg.devices else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for g in given {
            let g = g.as_str();
            if !crate::valid::is_kernel_device_name(g) {
                out.push(g.to_string());
                continue;
            }
            let name = given_name(self.root, g);
            let stable = self
                .plan
                .devices
                .iter()
                .find(|d| Some(&d.name) == name.as_ref())
                .map(|d| d.path.clone())
                .filter(|p| p.starts_with("/dev/disk/by-id/"));
            match stable {
                Some(p) => {
                    self.plan.notes.push(format!(
                        "warning: --devices {g} is a kernel name, which can name another disk after a reboot: the boot-time unit names it {p}, the mounts by filesystem UUID"
                    ));
                    out.push(p);
                }
                None => {
                    return Err(SetupError::Config(format!(
                        "--devices {g} is a kernel name, which can name another disk after a reboot, and it has no /dev/disk/by-id/ link for the boot-time unit: pass a /dev/disk/by-id/ path, or --persist fstab (mounts by UUID, no re-creation at boot)"
                    )))
                }
            }
        }
        Ok(Some(out))
    }

    /// `--persist`: units or fstab lines for every mount and bind, written only when they
    /// differ from what is there. A kernel name in `--devices` is never written: mounts are by
    /// filesystem UUID, the boot-time unit by /dev/disk/by-id/ ([`Planner::stable_devices`]).
    pub(super) fn persist(&mut self) -> Result<(), SetupError> {
        let opts = self.cfg.options_string();
        if self.cfg.persist == Persist::Fstab
            || self.cfg.persist == Persist::Systemd && self.cfg.boot_binary.is_none()
        {
            if let Some(given) = &self.cfg.devices {
                for g in given
                    .iter()
                    .filter(|g| crate::valid::is_kernel_device_name(g.as_str()))
                {
                    self.plan.notes.push(format!(
                        "warning: --devices {} is a kernel name, which can change between boots: the persisted mounts name the filesystem UUID instead",
                        g.as_str()
                    ));
                }
            }
        }
        match self.cfg.persist {
            Persist::None => Ok(()),
            Persist::Systemd => {
                let dir = units_dir(self.cfg);
                let mut changed = Vec::new();
                let mut units = Vec::new();
                let mut fs_unit_for_binds = String::new();
                for (what, target, fstype) in self.persisted.clone() {
                    let name = persist::mount_unit_name(&target);
                    let body = persist::fs_unit(&what, &target, &fstype, &opts);
                    fs_unit_for_binds = name.clone();
                    units.push((name, body));
                }
                for (src, target) in self.binds.clone() {
                    let name = persist::mount_unit_name(&target);
                    units.push((name, persist::bind_unit(&src, &target, &fs_unit_for_binds)));
                }
                if let Some(bin) = &self.cfg.boot_binary {
                    let devices = self.stable_devices()?;
                    let exec: Vec<String> = std::iter::once(bin.to_string())
                        .chain(self.cfg.to_args_with_devices(devices.as_deref()))
                        .map(|a| persist::exec_arg(&a))
                        .collect();
                    let mounts: Vec<String> = self
                        .persisted
                        .iter()
                        .map(|(_, t, _)| persist::mount_unit_name(t))
                        .collect();
                    let needs =
                        persist::boot_unit_needs(bin.as_str(), &self.cfg.mount, &self.cfg.bind);
                    units.push((
                        persist::boot_unit_name(&self.cfg.mount),
                        persist::boot_unit(
                            &exec.join(" "),
                            &self.cfg.mount,
                            &mounts.join(" "),
                            &needs,
                        ),
                    ));
                }
                for (name, body) in units {
                    let path = dir.join(&name);
                    let wants = dir.join("local-fs.target.wants").join(&name);
                    let now = std::fs::read_to_string(&path).ok();
                    let same = now.as_deref() == Some(&body);
                    if !same {
                        // A link or a directory there is refused now, before anything changes.
                        persist::replaceable(&path)?;
                        // So is a unit someone else wrote for the same mount point (an admin's,
                        // `render systemd`'s): it was replaced, and `--undo` then removed it
                        // as setup's (found by QA), as fstab's foreign line is refused.
                        if let Some(text) = now.filter(|t| !t.starts_with(persist::UNIT_HEADER)) {
                            let first = text.lines().next().unwrap_or_default();
                            return Err(SetupError::Config(format!(
                                "{} exists and was not written by disktier setup (it starts {first:?}): setup does not replace another's unit; if setup's should take its place, disable it and move it away (systemctl disable {name}), then re-run setup; or leave --persist out",
                                path.display(),
                            )));
                        }
                        self.push(Step::WriteFile {
                            was: persist::content_hash(&path),
                            path,
                            contents: body,
                        });
                    }
                    if !same || std::fs::symlink_metadata(&wants).is_err() {
                        changed.push(name);
                    }
                }
                if !changed.is_empty() {
                    let mut args = vec![
                        format!("--root={}", self.cfg.persist_root.display()),
                        "enable".to_string(),
                    ];
                    args.extend(changed);
                    self.push(Step::Systemctl { args });
                    if persist::node_systemd(&self.cfg.persist_root) {
                        self.push(Step::Systemctl {
                            args: vec!["daemon-reload".into()],
                        });
                    }
                }
                Ok(())
            }
            Persist::Fstab => {
                let path = self.cfg.persist_root.join("etc/fstab");
                let mut lines = Vec::new();
                for (what, target, fstype) in &self.persisted {
                    let uuid = what.rsplit('/').next().unwrap_or_default();
                    lines.push(persist::fstab_line(
                        &format!("UUID={uuid}"),
                        target,
                        fstype,
                        &opts,
                    ));
                }
                for (src, target) in &self.binds {
                    lines.push(persist::fstab_line(src.as_str(), target, "none", "bind"));
                }
                let existing = std::fs::read_to_string(&path).unwrap_or_default();
                let merged = persist::merge_fstab(&existing, &self.cfg.mount, &lines).map_err(|line| {
                    SetupError::Config(format!(
                        "{} already has a line for a target disktier mounts ({line}): remove it, or use --persist systemd",
                        path.display()
                    ))
                })?;
                if merged != existing {
                    // A link (found by QA: refused only when written, after mkfs and mount) or
                    // a directory there is refused now, before anything changes.
                    persist::replaceable(&path)?;
                    self.push(Step::WriteFile {
                        was: persist::content_hash(&path),
                        path,
                        contents: merged,
                    });
                }
                Ok(())
            }
        }
    }
}
