//! What one run knows of this machine (device, scheduler, cgroups, journal), and which
//! mitigations that rules out.

use super::Config;
use crate::cgroup::{Support, Version};
use crate::journal::Journal;
use crate::mitigation::{Combo, Mitigation};
use crate::scheduler::{self, Device};
use std::path::PathBuf;

pub(super) struct Ctx<'a> {
    pub(super) cfg: &'a Config,
    pub(super) journal: Journal,
    pub(super) device: std::result::Result<Device, String>,
    pub(super) sched_file: Option<PathBuf>,
    pub(super) sched_before: Option<scheduler::Schedulers>,
    pub(super) cgroups: Support,
    pub(super) work: PathBuf,
}

/// Why `m` cannot run here, if it cannot.
pub(super) fn unavailable(cx: &Ctx, m: Mitigation) -> Option<String> {
    let kind = cx.cfg.aggressor;
    let need_device = || cx.device.as_ref().err().cloned();
    let need_sched = |name: &str| -> Option<String> {
        if let Some(why) = need_device() {
            return Some(why);
        }
        let s = cx.sched_before.as_ref()?;
        if let Some(f) = cx.sched_file.as_ref().filter(|f| !crate::sys::writable(f)) {
            return Some(format!(
                "{} is not writable by this user: switching schedulers needs root (run with sudo)",
                f.display()
            ));
        }
        if !s.available.iter().any(|a| a == name) {
            return Some(format!(
                "{} offers the schedulers [{}], not {name} (load it with `modprobe {name}`)",
                cx.device.as_ref().map(|d| d.name.as_str()).unwrap_or("?"),
                s.available.join(", ")
            ));
        }
        None
    };
    let cgroup_root_writable = || -> Option<String> {
        let (_, root) = cx.cgroups.preferred().ok()?;
        if crate::sys::writable(&root) {
            None
        } else {
            Some(format!(
                "{} is not writable by this user: creating cgroups needs root (run with sudo)",
                root.display()
            ))
        }
    };
    match m {
        Mitigation::None | Mitigation::IoniceIdle | Mitigation::IoniceBe7 => None,
        Mitigation::SchedulerBfq => need_sched("bfq"),
        Mitigation::SchedulerMqDeadline => need_sched("mq-deadline"),
        Mitigation::CgroupWeight => {
            if let Some(why) = need_device().or_else(cgroup_root_writable) {
                return Some(why);
            }
            match cx.cgroups.preferred() {
                Err(why) => Some(why),
                Ok((Version::V1, _)) => need_sched("bfq").map(|why| {
                    format!("cgroup v1 weights are enforced only by the bfq scheduler, and {why}")
                }),
                Ok((Version::V2, _)) => None,
            }
        }
        Mitigation::CgroupThrottle => need_device()
            .or_else(|| cx.cgroups.preferred().err())
            .or_else(cgroup_root_writable),
        Mitigation::CgroupLatency => {
            if let Some(why) = need_device() {
                return Some(why);
            }
            match &cx.cgroups.v2 {
                Ok(_) => None,
                Err(why) => Some(format!(
                    "io.latency exists only in cgroup v2 (cgroup v1 blkio has no latency target), and {why}"
                )),
            }
        }
        Mitigation::WriterPerObjectFsync | Mitigation::WriterNoFsync => {
            kind.why_no_writer_policy().map(str::to_string)
        }
    }
}

/// Why the combination cannot run here: the first part that cannot, or a conflict between parts.
pub(super) fn combo_unavailable(cx: &Ctx, c: &Combo) -> Option<String> {
    if let Some(why) = c.parts().iter().find_map(|m| unavailable(cx, *m)) {
        return Some(why);
    }
    if c.has(Mitigation::CgroupWeight)
        && c.has(Mitigation::SchedulerMqDeadline)
        && matches!(cx.cgroups.preferred(), Ok((Version::V1, _)))
    {
        return Some(
            "cgroup v1 weights are enforced only by bfq, and this combination asks for mq-deadline"
                .into(),
        );
    }
    None
}
