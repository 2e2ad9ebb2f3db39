//! The last look before a destructive step. Discovery and planning happen a moment before
//! `mkfs` or `mdadm --create` runs; in that window another process may mount, format or open
//! the disk. Right before each destructive step the device is claimed with an `O_EXCL` open
//! (which fails while it is mounted, in an array or open exclusively elsewhere) and, while that
//! claim is held, probed again from scratch: sysfs (read-only flag, partitions, holders), the
//! mount table, blkid's low-level superblock probe (`blkid -p`, no cache) and a look for its
//! users (open in a process, backing a loop device: [`crate::discover::probe::users`]).
//! Anything but "blank and free" refuses the step; a probe that cannot answer refuses it too
//! (fail closed). The claim ([`Claim`]) is held until the step is about to run: every tool that
//! writes a filesystem, an array or a mount claims the device the same way (mkfs.xfs, mke2fs,
//! mdadm, mount), so none of them can write to it between the probe and the step (before, the
//! `O_EXCL` open was the last check and closed at once: a mkfs.ext4 run by another process
//! just after `blkid -p` found the disk blank went unseen, and setup's mkfs replaced its
//! filesystem without a word). The claim is let go just before the step's own command starts,
//! since that command claims the device itself; a writer that claims nothing (`dd`) is seen
//! only if it still has the device open when [`crate::discover::probe::users`] looks.

use super::SetupError;
use crate::discover::probe::users;
use crate::discover::{mountinfo, Signature};
use disktier_cmd::{Cmd, CommandRunner};
use std::path::{Path, PathBuf};

/// `device` claimed with an `O_EXCL` open ([`claim_blank_and_free`]): no other process can claim
/// it (mkfs, mdadm, mount) until this is dropped.
#[derive(Debug)]
pub struct Claim {
    file: std::fs::File,
    path: PathBuf,
}

impl Claim {
    /// Lets the device go, for the step's own command to claim it. A child that another thread
    /// of this process is starting holds a copy of the claim until it execs (a fork copies every
    /// descriptor; close-on-exec closes the copy only at the exec), so the device is opened
    /// exclusively again, every 10 ms for up to a second, until such a copy is gone: the step's
    /// command then does not meet this process's own claim (QA: mkfs.xfs 'cannot open: Device
    /// or resource busy' where tests ran setups in parallel threads). Whatever still holds it
    /// after that is the step's to meet: its command fails, naming the busy device.
    pub fn release(self) {
        let Claim { file, path } = self;
        drop(file);
        for _ in 0..100 {
            match claim(&path) {
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                _ => return,
            }
        }
    }
}

/// Checks that `device` (a `/dev/...` path or link, on the real node) is still blank and free,
/// and keeps it claimed (an `O_EXCL` open) from before the probes until the [`Claim`] is
/// dropped, right before the destructive step runs.
pub fn claim_blank_and_free(device: &str, runner: &dyn CommandRunner) -> Result<Claim, SetupError> {
    let refuse = |why: String| SetupError::Refused {
        device: device.to_string(),
        reasons: vec![format!("changed since it was planned: {why}")],
    };
    let real = std::fs::canonicalize(device)
        .map_err(|e| refuse(format!("cannot resolve {device}: {e}")))?;
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sys = PathBuf::from("/sys/class/block").join(&name);
    let read = |f: &str| std::fs::read_to_string(sys.join(f)).map(|s| s.trim().to_string());
    let maj_min = read("dev").map_err(|e| {
        refuse(format!(
            "{} is not a block device in sysfs ({e})",
            real.display()
        ))
    })?;
    if read("ro").ok().as_deref() != Some("0") {
        return Err(refuse("it is read-only".into()));
    }
    if sys.join("partition").exists() {
        return Err(refuse("it is a partition".into()));
    }
    // The claim first: from here to the step, no other claimer can write to the device.
    let file = claim(&real).map_err(|e| match e.raw_os_error() {
        Some(libc::EBUSY) => refuse(
            "another program now holds it open exclusively, or it is mounted (O_EXCL open: EBUSY)"
                .into(),
        ),
        _ => refuse(format!("cannot open {} to check: {e}", real.display())),
    })?;
    let entries = |d: &Path| -> Vec<String> {
        std::fs::read_dir(d)
            .map(|it| {
                it.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let holders = entries(&sys.join("holders"));
    if !holders.is_empty() {
        return Err(refuse(format!("it is now held by {}", holders.join(", "))));
    }
    if let Some(p) = entries(&sys).iter().find(|e| e.starts_with(&name)) {
        return Err(refuse(format!("it now has a partition {p}")));
    }
    let mounts = mountinfo::read(Path::new("/proc/self/mountinfo"))
        .map_err(|e| refuse(format!("cannot read /proc/self/mountinfo: {e}")))?;
    if let Some(m) = mounts.into_iter().find(|m| m.maj_min == maj_min) {
        return Err(refuse(format!("it is now mounted at {}", m.mount_point)));
    }
    let sig = probe_signature(&real, runner).map_err(|e| refuse(format!("{e:#}")))?;
    if let Some(why) = sig.unprobed {
        return Err(refuse(format!("its contents cannot be probed: {why}")));
    }
    if !sig.is_blank() {
        return Err(refuse(format!(
            "it now holds {}",
            sig.fstype.or(sig.pttype).unwrap_or_default()
        )));
    }
    // This process's own open is not counted ([`users`] skips it).
    let by = users(&real);
    if !by.is_empty() {
        return Err(refuse(format!("it is now in use: {}", by.join(", "))));
    }
    Ok(Claim { file, path: real })
}

/// An `O_EXCL` open of `dev`, kept (read-only: no I/O reaches the device).
fn claim(dev: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(dev)
}

/// `blkid -p -o export DEV`, read as discovery reads it (fail closed: see
/// [`crate::discover::probe::blkid_result`]).
pub fn probe_signature(dev: &Path, runner: &dyn CommandRunner) -> Result<Signature, SetupError> {
    let cmd = Cmd::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(dev.display().to_string());
    Ok(crate::discover::probe::blkid_result(
        &cmd,
        runner.output(&cmd)?,
    )?)
}
