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

/// The key a percentile has in `lat_ns.percentiles`: `"50"`, `"99"`, `"99.9"`, `"99.99"`. Kept
/// to the 6 decimals of fio's JSON keys (`"99.999000"`), so a `percentile_list` entry such as
/// 99.999 is `"99.999"`, not rounded to `"100"` (the max, which it is not).
pub fn percentile_key(p: f64) -> String {
    let s = format!("{p:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Any document a measuring command prints with `--format json` and saves: one run
/// ([`RunDoc`]: `bench`, `check etcd`, `import fio`, `import etcd-perf`), a fio job file's run
/// ([`JobFileDoc`]: `bench FILE.fio`, `import fio --jobs`), or `--repeat N` ([`RepeatDoc`]).
/// docs/result.schema.json is generated from this type.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ResultDocument {
    Run(Box<RunDoc>),
    JobFile(Box<JobFileDoc>),
    Repeat(Box<RepeatDoc>),
}

/// One run, as printed by `--format json` and saved in the store.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RunDoc {
    #[schemars(extend("const" = 1))]
    pub schema_version: u32,
    /// "disktier" for the native engine, "fio" when fio ran the job or its JSON was imported,
    /// "etcd-perf" for an import of the OpenShift etcd-perf image's output.
    #[schemars(extend("enum" = ["disktier", "fio", "etcd-perf"]))]
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
    #[schemars(extend("enum" = ["file", "directory", "device"]))]
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

/// A latency summary in ns. A figure that is not known (an import whose source does not carry
/// it, a group of fio jobs without histograms) is [`LatStats::UNKNOWN`] in Rust — 0 for `min`,
/// `max` and `mean` (no I/O takes 0 ns), NaN for `stdev` (0 is a real spread) — and `null` in
/// JSON; a percentile that is not known is left out of `percentiles`. Read them through
/// [`LatStats::min_ns`], [`LatStats::max_ns`], [`LatStats::mean_ns`], [`LatStats::stdev_ns`].
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct LatStats {
    /// null when unknown.
    #[serde(
        serialize_with = "unknown::ser_f64_positive",
        deserialize_with = "unknown::de_f64"
    )]
    #[schemars(with = "Nullable<f64>")]
    pub mean: f64,
    /// null when unknown.
    #[serde(
        serialize_with = "unknown::ser_f64",
        deserialize_with = "unknown::de_f64_nan"
    )]
    #[schemars(with = "Nullable<f64>")]
    pub stdev: f64,
    /// null when unknown.
    #[serde(
        serialize_with = "unknown::ser_u64",
        deserialize_with = "unknown::de_u64"
    )]
    #[schemars(with = "Nullable<u64>")]
    pub min: u64,
    /// null when unknown.
    #[serde(
        serialize_with = "unknown::ser_u64",
        deserialize_with = "unknown::de_u64"
    )]
    #[schemars(with = "Nullable<u64>")]
    pub max: u64,
    /// Keyed by [`percentile_key`]: "1", "5", ..., "50", "99", "99.9", "99.99". A percentile
    /// that is not known is absent.
    pub percentiles: BTreeMap<String, u64>,
}

impl LatStats {
    /// Nothing known: what an import without latencies has.
    pub const UNKNOWN: LatStats = LatStats {
        mean: 0.0,
        stdev: f64::NAN,
        min: 0,
        max: 0,
        percentiles: BTreeMap::new(),
    };

    pub fn p(&self, p: f64) -> Option<u64> {
        self.percentiles.get(&percentile_key(p)).copied()
    }
    /// The smallest latency, when known.
    pub fn min_ns(&self) -> Option<u64> {
        (self.min > 0).then_some(self.min)
    }
    /// The largest latency, when known.
    pub fn max_ns(&self) -> Option<u64> {
        (self.max > 0).then_some(self.max)
    }
    /// The mean latency, when known.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.mean.is_finite() && self.mean > 0.0).then_some(self.mean)
    }
    /// The standard deviation, when known.
    pub fn stdev_ns(&self) -> Option<f64> {
        (self.stdev.is_finite() && self.stdev >= 0.0).then_some(self.stdev)
    }

    /// Keeps every percentile within the observed `min` and `max` (where they are known). A
    /// histogram reports a bucket's highest equivalent value, which can lie a little above the
    /// largest sample in it (fio's bins too): a p99 above the max is never true.
    pub fn clamp_percentiles(&mut self) {
        let (lo, hi) = (self.min_ns(), self.max_ns());
        for v in self.percentiles.values_mut() {
            if let Some(hi) = hi {
                *v = (*v).min(hi);
            }
            if let Some(lo) = lo {
                *v = (*v).max(lo);
            }
        }
    }
}

/// The schema of a field that is always present and may be `null` (schemars reads an
/// `Option` as a field that may be left out).
struct Nullable<T>(std::marker::PhantomData<T>);

impl<T: schemars::JsonSchema> schemars::JsonSchema for Nullable<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Option::<T>::schema_name()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Option::<T>::json_schema(g)
    }
}

/// serde for [`LatStats`]' unknown figures: the Rust sentinel (0, NaN) is `null` in JSON, and
/// `null` reads back as the sentinel.
mod unknown {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn ser_u64<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        if *v == 0 {
            s.serialize_none()
        } else {
            s.serialize_u64(*v)
        }
    }
    /// The mean: 0 (or not finite) is unknown.
    pub fn ser_f64_positive<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() && *v > 0.0 {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }
    /// The standard deviation: 0 is a real value; NaN is unknown.
    pub fn ser_f64<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }
    pub fn de_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.unwrap_or(0))
    }
    pub fn de_f64<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(0.0))
    }
    pub fn de_f64_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
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
    /// From the first create to the end of the final `syncfs`: the files are on the disk.
    pub seconds: f64,
    pub files_per_s: f64,
    pub bw_bytes: f64,
    /// The final `syncfs` alone, within `seconds`: what the page cache still held when the last
    /// file was closed (absent in results from before disktier synced, and when a signal
    /// stopped the run before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_s: Option<f64>,
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
    /// True (and `pass` false) when a runtime cap (`--quick`'s) ended the run before its size
    /// and its interval does not settle the verdict: the disk was shown neither fast enough nor
    /// too slow. Left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inconclusive: bool,
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

/// The run of a fio job file (`bench FILE.fio`) or fio's JSON of one (`import fio --jobs`):
/// every job's figures and every reporting group's, in one document.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct JobFileDoc {
    #[schemars(extend("const" = 1))]
    pub schema_version: u32,
    /// Always "jobfile".
    #[schemars(extend("const" = "jobfile"))]
    pub kind: String,
    /// The job file's path as given, or the imported JSON's.
    pub jobfile: String,
    /// "disktier" or "fio" (`--engine fio`, an import).
    #[schemars(extend("enum" = ["disktier", "fio"]))]
    pub engine: String,
    pub started_at: String,
    /// The first job's target; null when the file ran no job.
    pub target: Option<TargetInfo>,
    /// The host the first job ran on (empty for imports).
    pub host: Option<HostInfo>,
    /// Seconds measured, summed over the run sets.
    pub duration_s: f64,
    pub interrupted: bool,
    /// One entry per job (per fio entry for fio's output: each `numjobs` clone on its own
    /// without `group_reporting`).
    pub jobs: Vec<JobEntry>,
    /// The reporting groups, each its jobs combined.
    pub groups: Vec<GroupEntry>,
    /// What the file asked for beyond its options, in words (`ioengine=libaio` ran through
    /// io_uring; an import's unknown host).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// One job of a [`JobFileDoc`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct JobEntry {
    pub name: String,
    /// fio's groupid.
    pub group: u32,
    /// Seconds from the start of the file's run to the start of the job's run set (null from
    /// fio).
    pub start_s: Option<f64>,
    pub started_at: String,
    /// The resolved job, as in a run document.
    pub job: serde_json::Value,
    pub target: TargetInfo,
    pub duration_s: f64,
    pub interrupted: bool,
    pub results: Results,
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// One reporting group of a [`JobFileDoc`]: its jobs combined (counts and rates added,
/// latencies merged; a figure that cannot be derived is null).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct GroupEntry {
    pub group: u32,
    /// The names of its jobs, each once.
    pub jobs: Vec<String>,
    /// Whether the group is reported as one (fio's `group_reporting`).
    pub group_reporting: bool,
    pub results: Results,
}

/// `--repeat N` (bench, check etcd): every run with the id it was saved under, and what the
/// runs agree on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RepeatDoc {
    #[schemars(extend("const" = 1))]
    pub schema_version: u32,
    /// Always "repeat".
    #[schemars(extend("const" = "repeat"))]
    pub kind: String,
    /// The store's group id of the runs (null with `--no-save`).
    pub group_id: Option<String>,
    pub runs: Vec<RepeatRun>,
    pub aggregate: RepeatAggregate,
    /// A signal stopped the series. The run it stopped is not counted in the aggregate; when
    /// it measured anything it is the last of `runs` (saved, marked `interrupted`), else it is
    /// not there at all.
    #[serde(default)]
    pub interrupted: bool,
}

/// One run of a [`RepeatDoc`]: its run document and its store id.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RepeatRun {
    #[serde(flatten)]
    pub doc: RunDoc,
    /// The id the run was saved under (null with `--no-save` or when spooled).
    pub id: Option<String>,
}

/// What the runs of `--repeat N` agree on: the median p99, the spread between runs, and how
/// many passed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RepeatAggregate {
    /// Runs counted: those that completed (a run a signal stopped is not counted).
    pub runs: usize,
    /// Which p99 the figures are (`sync.p99`, `write.p99`, `read.p99`).
    pub metric: String,
    /// Runs that had the figure.
    pub measured: usize,
    pub median_p99_ns: Option<f64>,
    pub min_p99_ns: Option<u64>,
    pub max_p99_ns: Option<u64>,
    /// Sample standard deviation of the p99s over their mean (needs two runs).
    pub cv: Option<f64>,
    /// Runs whose verdict passed, when the command has a verdict.
    pub passed: Option<usize>,
    /// "pass" (all passed), "fail" (none passed), "unstable" (some did), or "none" (no verdict).
    #[schemars(extend("enum" = ["pass", "fail", "unstable", "none"]))]
    pub verdict: String,
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
        // QA: fio's `percentile_list=42:99.999:99` imported its p99.999 as "100", beside the
        // max it is not.
        assert_eq!(percentile_key(99.999), "99.999");
        assert_eq!(percentile_key(99.9999), "99.9999");
        assert_eq!(percentile_key(42.0), "42");
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
