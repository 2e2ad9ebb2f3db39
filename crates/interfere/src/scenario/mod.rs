//! Running the comparison: a baseline (the probe alone), then for each mitigation the probe with
//! the aggressor next to it, the mitigation applied for real, checked by reading it back, and
//! undone afterwards. Every change goes through the [`Journal`] first.
//!
//! `run.rs` runs the whole comparison; `one.rs` one mitigated scenario; `probe.rs` the probe
//! itself; `context.rs` holds what a run knows of this machine and what it makes impossible.

mod context;
mod one;
mod probe;
mod run;

pub use run::run;

use crate::aggressor::{AggressorKind, AggressorSpec};
use crate::error::Result;
use crate::journal::{self};
use crate::mitigation::{Combo, Mitigation};
use disktier_engine::{DirStats, Job, Profile};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The cgroup v1 bfq weight given to the aggressor: 10 against the default 100
/// (`cgroup-v1/blkio-controller.rst`: weights 1-1000, default 100), a tenth of the probe's share.
pub const V1_WEIGHT: u32 = 10;
/// The cgroup v2 io.weight given to the aggressor: 10 against the default 100 (range 1-10000,
/// `cgroup-v2.rst`).
pub const V2_WEIGHT: u32 = 10;

/// A scenario's changes, in place, as `Config::on_applied` sees them.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The scenario's first (for a single mitigation, its only) mitigation.
    pub mitigation: Mitigation,
    /// All of the scenario's mitigations (more than one for `a+b`).
    pub parts: Vec<Mitigation>,
    pub aggressor_pid: i32,
    /// The read-back lines that also go into the scenario's `applied`.
    pub readback: Vec<String>,
}

/// See [`Config::on_applied`].
pub type OnApplied = Box<dyn Fn(&Applied)>;
/// The engine's progress callback.
pub type ProgressFn = Arc<dyn Fn(&disktier_engine::Progress) + Send + Sync>;

/// What the command line asked for, checked.
pub struct Config {
    pub dir: PathBuf,
    pub aggressor: AggressorKind,
    /// The user's command when `aggressor` is [`AggressorKind::Command`] (`--aggressor-cmd`).
    pub aggressor_cmd: Option<crate::aggressor::command::UserCommand>,
    pub aggressor_size: u64,
    pub mitigations: Vec<Combo>,
    /// How long the probe runs in each scenario.
    pub duration: Duration,
    /// etcd's limit for the fdatasync p99 (10 ms in etcd's docs).
    pub threshold: Duration,
    /// `cgroup-throttle`: the aggressor's write limit in bytes/s and IOPS.
    pub throttle_bps: u64,
    pub throttle_iops: u64,
    /// Where the journal and its lock live.
    pub run_dir: PathBuf,
    /// Builds the command that runs the aggressor process (the binary re-executed).
    pub launcher: Box<dyn Fn(&AggressorSpec) -> Command>,
    /// Set by Ctrl-C: the current scenario stops within a second and everything is undone.
    pub stop: Arc<AtomicBool>,
    /// How long the aggressor may run after it starts before it is stopped and marked capped.
    pub cap: Duration,
    /// How long after the probe the aggressor starts.
    pub start_delay: Duration,
    /// Receives notes ("scenario 2/5: ostree/ionice-idle") as the run goes.
    pub notes: Box<dyn Fn(&str)>,
    /// Called once a scenario's changes are applied, before the aggressor starts writing
    /// (tests use it to look at the system themselves).
    pub on_applied: Option<OnApplied>,
    /// The probe's progress (the binary's live line).
    pub progress: Option<ProgressFn>,
}

impl Config {
    /// The aggressor cap when the user gave none: long enough for a mitigation that makes the
    /// aggressor ten times slower to show it, bounded so a run always ends.
    pub fn default_cap(duration: Duration) -> Duration {
        duration.saturating_mul(10).max(Duration::from_secs(30))
    }

    /// How long after the probe the aggressor starts: a tenth of the probe's `duration`, at most
    /// 2 s, so the probe's first latencies are its own and most of the run is under contention.
    pub fn default_start_delay(duration: Duration) -> Duration {
        (duration / 10).min(Duration::from_secs(2))
    }
}

/// The probe: the `etcd` profile's job (2300-byte writes, fdatasync after each, ioengine sync),
/// made time-based for `duration`.
pub fn probe_job(dir: &Path, duration: Duration) -> Job {
    let mut job = match Profile::Etcd.workload(dir, false) {
        disktier_engine::Workload::Job(j) => j,
        disktier_engine::Workload::SmallFiles { .. } => unreachable!("etcd is a job"),
    };
    job.name = "probe".into();
    job.time_based = true;
    job.runtime = Some(duration);
    job
}

/// The sync (fdatasync) figures of a probe run.
pub fn sync_stats(m: &disktier_engine::Measured) -> Option<DirStats> {
    m.doc.results.sync.clone()
}

/// Undoes what a killed run left (what `--restore` runs).
pub fn restore(run_dir: &Path) -> Result<journal::Restored> {
    journal::restore(run_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_delay_is_a_tenth_of_the_duration_at_most_two_seconds() {
        let s = Duration::from_secs;
        assert_eq!(
            Config::default_start_delay(s(1)),
            Duration::from_millis(100)
        );
        assert_eq!(Config::default_start_delay(s(10)), s(1));
        assert_eq!(Config::default_start_delay(s(20)), s(2));
        assert_eq!(Config::default_start_delay(s(60)), s(2));
    }
}
