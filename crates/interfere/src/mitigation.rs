//! The mitigations a user can compare, by name, and the writer policies of the aggressor.

use crate::error::{InterfereError, Result};
use serde::{Deserialize, Serialize};

/// One thing a node owner can set so that a bulk writer hurts etcd less (seed 004 and the
/// kernel I/O controls in references.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mitigation {
    /// The aggressor as it is.
    None,
    /// `ionice -c3`: the idle I/O class for the aggressor.
    IoniceIdle,
    /// `ionice -c2 -n7`: the lowest best-effort level for the aggressor.
    IoniceBe7,
    /// The device's scheduler switched to bfq for the scenario.
    SchedulerBfq,
    /// The device's scheduler switched to mq-deadline for the scenario.
    SchedulerMqDeadline,
    /// The aggressor in a cgroup with a low proportional weight.
    CgroupWeight,
    /// The aggressor in a cgroup with a write bandwidth/IOPS limit.
    CgroupThrottle,
    /// The probe in a cgroup v2 with an `io.latency` target, the aggressor its sibling.
    CgroupLatency,
    /// The writer fsyncs each object as it writes it (what OSTree shipped, ostree PR 2147).
    WriterPerObjectFsync,
    /// The writer never fsyncs (ostree pull `--disable-fsync`).
    WriterNoFsync,
}

impl Mitigation {
    pub fn all() -> &'static [Mitigation] {
        &[
            Mitigation::None,
            Mitigation::IoniceIdle,
            Mitigation::IoniceBe7,
            Mitigation::SchedulerBfq,
            Mitigation::SchedulerMqDeadline,
            Mitigation::CgroupWeight,
            Mitigation::CgroupThrottle,
            Mitigation::CgroupLatency,
            Mitigation::WriterPerObjectFsync,
            Mitigation::WriterNoFsync,
        ]
    }

    pub fn name(self) -> &'static str {
        match self {
            Mitigation::None => "none",
            Mitigation::IoniceIdle => "ionice-idle",
            Mitigation::IoniceBe7 => "ionice-be7",
            Mitigation::SchedulerBfq => "scheduler-bfq",
            Mitigation::SchedulerMqDeadline => "scheduler-mq-deadline",
            Mitigation::CgroupWeight => "cgroup-weight",
            Mitigation::CgroupThrottle => "cgroup-throttle",
            Mitigation::CgroupLatency => "cgroup-latency",
            Mitigation::WriterPerObjectFsync => "writer-per-object-fsync",
            Mitigation::WriterNoFsync => "writer-no-fsync",
        }
    }

    pub fn names() -> Vec<&'static str> {
        Self::all().iter().map(|m| m.name()).collect()
    }

    pub fn from_name(s: &str) -> Result<Mitigation> {
        Self::all()
            .iter()
            .copied()
            .find(|m| m.name() == s)
            .ok_or_else(|| InterfereError::UnknownMitigation(s.to_string()))
    }

    /// Parses `none,ionice-idle,...`, dropping repeats and keeping the order given.
    pub fn parse_list(s: &str) -> Result<Vec<Mitigation>> {
        let mut out = Vec::new();
        for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let m = Self::from_name(w)?;
            if !out.contains(&m) {
                out.push(m);
            }
        }
        if out.is_empty() {
            return Err(InterfereError::BadInput(
                "--mitigations is empty: name at least one, e.g. none".into(),
            ));
        }
        Ok(out)
    }

    /// What the mitigation does, in words, for the table's legend.
    pub fn describe(self) -> &'static str {
        match self {
            Mitigation::None => "the aggressor as it is",
            Mitigation::IoniceIdle => "aggressor in the idle I/O class (ionice -c3)",
            Mitigation::IoniceBe7 => "aggressor at best-effort level 7 (ionice -c2 -n7)",
            Mitigation::SchedulerBfq => "device scheduler switched to bfq",
            Mitigation::SchedulerMqDeadline => "device scheduler switched to mq-deadline",
            Mitigation::CgroupWeight => "aggressor in a cgroup with a low I/O weight",
            Mitigation::CgroupThrottle => "aggressor in a cgroup with a write limit",
            Mitigation::CgroupLatency => "probe in a cgroup v2 with an io.latency target",
            Mitigation::WriterPerObjectFsync => "the writer fsyncs each object",
            Mitigation::WriterNoFsync => "the writer never fsyncs",
        }
    }

    /// The writer policy this mitigation implies.
    pub fn writer_policy(self) -> WriterPolicy {
        match self {
            Mitigation::WriterPerObjectFsync => WriterPolicy::PerObject,
            Mitigation::WriterNoFsync => WriterPolicy::NoFsync,
            _ => WriterPolicy::SyncfsAtEnd,
        }
    }
}

impl std::fmt::Display for Mitigation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the aggressor makes its writes durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriterPolicy {
    /// One `syncfs` when everything is written (ostree's default before PR 2147).
    SyncfsAtEnd,
    /// `fsync` each object as soon as it is written.
    PerObject,
    /// No fsync at all; the kernel writes back when it likes.
    NoFsync,
}

impl WriterPolicy {
    pub fn name(self) -> &'static str {
        match self {
            WriterPolicy::SyncfsAtEnd => "syncfs-at-end",
            WriterPolicy::PerObject => "per-object-fsync",
            WriterPolicy::NoFsync => "no-fsync",
        }
    }

    pub fn from_name(s: &str) -> Option<WriterPolicy> {
        [
            WriterPolicy::SyncfsAtEnd,
            WriterPolicy::PerObject,
            WriterPolicy::NoFsync,
        ]
        .into_iter()
        .find(|p| p.name() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_lists_parse() {
        for m in Mitigation::all() {
            assert_eq!(Mitigation::from_name(m.name()).unwrap(), *m);
        }
        let l = Mitigation::parse_list("none, ionice-idle,none,writer-no-fsync").unwrap();
        assert_eq!(
            l,
            [
                Mitigation::None,
                Mitigation::IoniceIdle,
                Mitigation::WriterNoFsync
            ]
        );
        let e = Mitigation::parse_list("none,bogus")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus") && e.contains("scheduler-bfq"), "{e}");
        assert!(Mitigation::parse_list(",").is_err());
    }
}
