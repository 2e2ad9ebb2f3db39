//! The result document: what one run measured, in the shape `--format json` prints, the store
//! keeps and the report draws. Versioned by [`SCHEMA_VERSION`]; fields may be added, never renamed.
//! The schema is documented in `docs/result-schema.md` (and `docs/result.schema.json`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped only for incompatible changes; readers refuse documents from a newer version.
pub const SCHEMA_VERSION: u32 = 1;

/// The percentiles every latency summary carries (the list fio prints, plus 99.95 and 99.99).
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The key a percentile has in `lat_ns.percentiles`: `"50"`, `"99"`, `"99.9"`, `"99.99"`.
pub fn percentile_key(p: f64) -> String {
    let s = format!("{p:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// One run, as printed by `--format json` and saved in the store.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RunDoc {
    pub schema_version: u32,
    /// "disktier" for the native engine, "fio" when fio ran the job or its JSON was imported.
    pub engine: String,
    /// The built-in profile, if the run used one (`etcd`, `read-iops`, ...).
    #[serde(default)]
    pub profile: Option<String>,
    /// Whether `--quick` scaled the profile down.
    #[serde(default)]
    pub quick: bool,
    /// The resolved job, with fio's option names.
    pub job: serde_json::Value,
    pub target: TargetInfo,
    pub host: HostInfo,
    /// RFC 3339 UTC time the run started.
    pub started_at: String,
    /// Wall-clock seconds of the measured phase (after ramp time).
    pub duration_s: f64,
    /// True when Ctrl-C or a signal stopped the run early: the figures are partial.
    #[serde(default)]
    pub interrupted: bool,
    pub results: Results,
    /// One sample a second.
    #[serde(default)]
    pub series: Vec<Sample>,
    #[serde(default)]
    pub verdicts: Vec<Verdict>,
    /// Warnings raised while running (fallbacks, clamps), in words.
    #[serde(default)]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct TargetInfo {
    pub path: String,
    /// "file", "directory" or "device".
    pub kind: String,
    /// Filesystem type holding the target (`xfs`, `ext4`, `tmpfs`), if a file or directory.
    #[serde(default)]
    pub fs_type: Option<String>,
    /// Kernel name of the block device behind the target (`loop0`, `nvme1n1`), if known.
    #[serde(default)]
    pub device: Option<String>,
    /// Device model from sysfs, if known.
    #[serde(default)]
    pub model: Option<String>,
    /// The device's I/O scheduler at the time of the run, if known.
    #[serde(default)]
    pub scheduler: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub cpus: u32,
    /// "aws", "gcp", "azure" or None, from DMI.
    #[serde(default)]
    pub cloud: Option<String>,
    /// Instance or machine type when DMI tells it (`m6id.xlarge`).
    #[serde(default)]
    pub instance_type: Option<String>,
    #[serde(default)]
    pub sys_vendor: Option<String>,
    #[serde(default)]
    pub product_name: Option<String>,
    /// How the host's idle CPUs wait ([`CpuIdle`]), when sysfs tells it (absent otherwise, as
    /// in an imported fio result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuidle: Option<CpuIdle>,
}

/// The cpuidle driver and governor (`/sys/devices/system/cpu/cpuidle`), and, under the haltpoll
/// driver of a KVM guest, `guest_halt_poll_ns`: how long an idle vCPU polls before it halts
/// (Documentation/virt/guest-halt-polling.rst; the kernel's default is 200000). At 0 every
/// wake-up of an idle vCPU costs an IPI and a VM exit, which shows in sync latency and IOPS: on
/// a 2-vCPU guest, the etcd job's rate nearly halved (BENCHMARKS.md, issue #18, session 7).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CpuIdle {
    pub driver: String,
    #[serde(default)]
    pub governor: Option<String>,
    #[serde(default)]
    pub guest_halt_poll_ns: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Results {
    #[serde(default)]
    pub read: Option<DirStats>,
    #[serde(default)]
    pub write: Option<DirStats>,
    /// fsync/fdatasync latencies, timed on their own as fio does.
    #[serde(default)]
    pub sync: Option<DirStats>,
    #[serde(default)]
    pub cpu: Cpu,
    /// The `small-files` profile's result.
    #[serde(default)]
    pub small_files: Option<SmallFiles>,
}

/// Figures for one direction (read, write) or for sync calls.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_ns: LatStats,
    /// Calls longer than etcd's heartbeat interval and election timeout, counted exactly per
    /// call (not from histogram buckets). Set on `sync`; absent in imported fio results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<Stalls>,
}

impl DirStats {
    /// The figures of `ios` syncs (fsync/fdatasync) over `duration_s` seconds: they move no
    /// bytes; no stalls counted.
    pub fn syncs(ios: u64, duration_s: f64, lat_ns: LatStats) -> DirStats {
        DirStats {
            ios,
            bytes: 0,
            iops: if duration_s > 0.0 {
                ios as f64 / duration_s
            } else {
                0.0
            },
            bw_bytes: 0.0,
            lat_ns,
            stalls: None,
        }
    }
}

/// Counts of calls longer than etcd's raft timeouts: what a p99 hides.
#[derive(
    Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema,
)]
pub struct Stalls {
    /// The heartbeat interval the count is against (ns): 100 ms, etcd's default.
    pub heartbeat_ns: u64,
    /// Calls longer than `heartbeat_ns`.
    pub over_heartbeat: u64,
    /// The election timeout the count is against (ns): 1 s, etcd's default.
    pub election_ns: u64,
    /// Calls longer than `election_ns`.
    pub over_election: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct LatStats {
    pub mean: f64,
    pub stdev: f64,
    pub min: u64,
    pub max: u64,
    /// Keyed by [`percentile_key`]: "1", "5", ..., "50", "99", "99.9", "99.99".
    pub percentiles: BTreeMap<String, u64>,
}

impl LatStats {
    pub fn p(&self, p: f64) -> Option<u64> {
        self.percentiles.get(&percentile_key(p)).copied()
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Cpu {
    pub usr_s: f64,
    pub sys_s: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct SmallFiles {
    pub files: u64,
    pub file_size: u64,
    pub seconds: f64,
    pub files_per_s: f64,
    pub bw_bytes: f64,
}

/// One second of the run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Sample {
    /// Seconds since the measured phase began (end of the interval).
    pub t_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bw_bytes: f64,
    pub write_bw_bytes: f64,
    /// p99 completion latency within this second (ns), all directions.
    #[serde(default)]
    pub p99_ns: Option<u64>,
    /// p99 sync latency within this second (ns), when the job syncs.
    #[serde(default)]
    pub sync_p99_ns: Option<u64>,
}

/// A pass/fail judgement, e.g. `{name: "etcd", metric: "sync.p99", value: 203776, threshold: 1e7, pass: true}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Verdict {
    pub name: String,
    pub metric: String,
    pub value: f64,
    pub threshold: f64,
    pub pass: bool,
    /// The sentence a user reads.
    #[serde(default)]
    pub message: String,
    /// The 95 % confidence interval of the measured value, when it is a percentile (the etcd
    /// verdict's p99, from order statistics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<QuantileCi>,
}

/// A confidence interval for a quantile of the latency distribution (built by
/// `verdict::quantile_ci`, which also words it). The fields are in alphabetical order: the
/// order in which documents have always printed them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QuantileCi {
    /// True when the bounds were interpolated from a percentile list rather than read from
    /// the samples.
    pub approximate: bool,
    pub confidence: f64,
    /// Upper bound (ns); `None` when there are too few samples above the quantile: the true
    /// value may lie beyond the largest sample.
    pub hi_ns: Option<u64>,
    /// 1-based rank of the upper bound among the sorted samples.
    pub hi_rank: Option<u64>,
    /// Lower bound (ns); `None` when there are too few samples below the quantile.
    pub lo_ns: Option<u64>,
    /// 1-based rank of the lower bound among the sorted samples.
    pub lo_rank: Option<u64>,
    /// Samples the interval is computed from.
    pub n: u64,
    /// The quantile, e.g. 0.99.
    pub q: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_keys() {
        let keys: Vec<String> = PERCENTILES.iter().map(|p| percentile_key(*p)).collect();
        assert_eq!(keys[0], "1");
        assert_eq!(keys[6], "50");
        assert_eq!(keys[12], "99");
        assert_eq!(keys[13], "99.5");
        assert_eq!(keys[14], "99.9");
        assert_eq!(keys[15], "99.95");
        assert_eq!(keys[16], "99.99");
    }

    /// Documents printed `ci95` as free JSON (keys sorted) before it was typed: the typed field
    /// must print the same bytes.
    #[test]
    fn ci95_prints_as_it_did_when_it_was_free_json() {
        let ci = QuantileCi {
            approximate: true,
            confidence: 0.95,
            hi_ns: None,
            hi_rank: None,
            lo_ns: Some(1_200_000),
            lo_rank: Some(97),
            n: 120,
            q: 0.99,
        };
        let typed = serde_json::to_string(&ci).unwrap();
        let free = serde_json::to_string(&serde_json::to_value(&ci).unwrap()).unwrap();
        assert_eq!(typed, free);
    }
}
