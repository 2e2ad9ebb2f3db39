//! The last look before a destructive step. Discovery and planning happen a moment before
//! `mkfs` or `mdadm --create` runs; in that window another process may mount, format or open
//! the disk. Right before each destructive step the device is probed again from scratch:
//! sysfs (read-only flag, partitions, holders), the mount table, blkid's low-level superblock
//! probe (`blkid -p`, no cache), an `O_EXCL` open and a look for its users (open in a process,
//! backing a loop device: [`crate::discover::probe::users`]). Anything but "blank and free" refuses the
//! step; a probe that cannot answer refuses it too (fail closed).

use super::SetupError;
use crate::discover::probe::exclusive_open;
use crate::discover::{mountinfo, Exclusive, Signature};
use disktier_cmd::{Cmd, CommandRunner};
use std::path::{Path, PathBuf};

/// Checks that `device` (a `/dev/...` path or link, on the real node) is still blank and free.
pub fn blank_and_free(device: &str, runner: &dyn CommandRunner) -> Result<(), SetupError> {
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
    match exclusive_open(&real) {
        Exclusive::Free => Ok(()),
        Exclusive::Busy => Err(refuse(
            "another program now holds it open exclusively (O_EXCL open: EBUSY)".into(),
        )),
        Exclusive::InUse(by) => Err(refuse(format!("it is now in use: {}", by.join(", ")))),
        Exclusive::Unknown(why) => Err(refuse(why)),
    }
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
