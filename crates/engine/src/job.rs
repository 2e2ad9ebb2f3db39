//! The job model: what to run, with fio's option names and semantics (fio HOWTO, "Job file
//! parameters"), and the checks that reject jobs the engine cannot run before any I/O starts.

use crate::advice;
use crate::advice::{Advice, Pass};
use crate::error::EngineError;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// The I/O pattern, fio's `rw` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    ReadWrite,
    RandRw,
}

impl Rw {
    pub const ALL: [Rw; 6] = [
        Rw::Read,
        Rw::Write,
        Rw::RandRead,
        Rw::RandWrite,
        Rw::ReadWrite,
        Rw::RandRw,
    ];

    /// fio's spelling: `read`, `write`, `randread`, `randwrite`, `readwrite`, `randrw`.
    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::ReadWrite => "readwrite",
            Rw::RandRw => "randrw",
        }
    }

    /// Parses fio's spellings, including fio's aliases `rw` (readwrite) and `trimwrite`-free set.
    pub fn from_name(s: &str) -> Option<Rw> {
        match s {
            "read" => Some(Rw::Read),
            "write" => Some(Rw::Write),
            "randread" => Some(Rw::RandRead),
            "randwrite" => Some(Rw::RandWrite),
            "readwrite" | "rw" => Some(Rw::ReadWrite),
            "randrw" => Some(Rw::RandRw),
            _ => None,
        }
    }

    pub fn reads(self) -> bool {
        !matches!(self, Rw::Write | Rw::RandWrite)
    }

    pub fn writes(self) -> bool {
        !matches!(self, Rw::Read | Rw::RandRead)
    }

    pub fn random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw)
    }

    pub fn mixed(self) -> bool {
        matches!(self, Rw::ReadWrite | Rw::RandRw)
    }
}

impl std::fmt::Display for Rw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How I/O is issued, fio's `ioengine` option (the subset disktier implements natively).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IoEngineKind {
    /// Linux io_uring, with registered files and buffers: honours `iodepth`.
    #[serde(rename = "io_uring")]
    IoUring,
    /// `pread`/`pwrite`, one I/O at a time (`iodepth` has no effect, as in fio).
    #[serde(rename = "psync")]
    Psync,
    /// `lseek` + `read`/`write`, as fio's `sync` engine (etcd's job uses it).
    #[serde(rename = "sync")]
    Sync,
}

impl IoEngineKind {
    pub fn name(self) -> &'static str {
        match self {
            IoEngineKind::IoUring => "io_uring",
            IoEngineKind::Psync => "psync",
            IoEngineKind::Sync => "sync",
        }
    }

    pub fn from_name(s: &str) -> Option<IoEngineKind> {
        match s {
            "io_uring" | "io-uring" | "uring" => Some(IoEngineKind::IoUring),
            "psync" | "pvsync" => Some(IoEngineKind::Psync),
            "sync" => Some(IoEngineKind::Sync),
            _ => None,
        }
    }
}

impl std::fmt::Display for IoEngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// fio's default random seed (`FIO_RANDSEED` in fio's fio.h, used while `randrepeat=1`, the
/// default), so that two runs of the same job issue the same offsets.
pub const DEFAULT_RANDSEED: u64 = 0xb189_9bed;

/// One job, with fio's option names. `numjobs` threads each run it on their own file (directory
/// target) or on the same file/device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Job {
    pub name: String,
    /// A file, a block device, or a directory in which per-job files `<name>.<jobnum>.0` are created.
    /// Written to JSON lossily (U+FFFD for bytes that are not UTF-8), as `target.path` is: a
    /// path serde cannot write used to turn the whole job into `null` (QA).
    #[serde(serialize_with = "lossy_path")]
    pub target: PathBuf,
    pub rw: Rw,
    /// Percentage of reads in a mixed (`readwrite`/`randrw`) job.
    pub rwmixread: u32,
    pub bs: u64,
    /// Bytes of the target each job works on; `None` for the whole file or device.
    pub size: Option<u64>,
    pub offset: u64,
    pub numjobs: u32,
    pub iodepth: u32,
    pub ioengine: IoEngineKind,
    pub direct: bool,
    /// `fsync(2)` after every N writes (0 = never).
    pub fsync: u32,
    /// `fdatasync(2)` after every N writes (0 = never).
    pub fdatasync: u32,
    #[serde(with = "dur_opt")]
    pub runtime: Option<Duration>,
    pub time_based: bool,
    #[serde(with = "dur")]
    pub ramp_time: Duration,
    pub randseed: u64,
    /// The CPUs the job threads may run on, in fio's `cpus_allowed` list form ("0", "0-3,6");
    /// empty: wherever the scheduler puts them (fio's default). All job threads share the set
    /// (fio's `cpus_allowed_policy=shared`).
    pub cpus_allowed: String,
    /// Random offsets drawn with replacement (fio's `norandommap`) instead of every block once
    /// per pass (fio's default random map).
    pub norandommap: bool,
    /// How many I/Os to submit at once: fio's `iodepth_batch_submit`, 1 by default (each I/O
    /// as soon as it is ready), 0 meaning `iodepth`.
    pub iodepth_batch_submit: u32,
}

impl Default for Job {
    /// fio's defaults (rw=read, bs=4k, numjobs=1, iodepth=1, rwmixread=50), except that the
    /// engine is io_uring rather than psync.
    fn default() -> Self {
        Job {
            name: "disktier".into(),
            target: PathBuf::from("."),
            rw: Rw::Read,
            rwmixread: 50,
            bs: 4096,
            size: None,
            offset: 0,
            numjobs: 1,
            iodepth: 1,
            ioengine: IoEngineKind::IoUring,
            direct: false,
            fsync: 0,
            fdatasync: 0,
            runtime: None,
            time_based: false,
            ramp_time: Duration::ZERO,
            randseed: DEFAULT_RANDSEED,
            cpus_allowed: String::new(),
            norandommap: false,
            iodepth_batch_submit: 1,
        }
    }
}

/// The largest CPU number a CPU list may name (the kernel's cpu_set_t holds 1024).
pub const MAX_CPU: u32 = 1023;

/// Parses fio's CPU list form: comma-separated CPU numbers and `a-b` ranges ("0", "0-3,6").
/// Returns the CPUs in order, without repeats.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut cpus = std::collections::BTreeSet::new();
    for part in s.split(',').map(str::trim) {
        let num = |x: &str| -> Result<u32, String> {
            let n: u32 = x
                .trim()
                .parse()
                .map_err(|_| format!("`{x}` is not a CPU number"))?;
            if n > MAX_CPU {
                return Err(format!("CPU {n} is above {MAX_CPU}"));
            }
            Ok(n)
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("the range {a}-{b} runs backwards"));
                }
                cpus.extend(a..=b);
            }
            None => {
                cpus.insert(num(part)?);
            }
        }
    }
    Ok(cpus.into_iter().collect())
}

/// The shortest runtime: fio keeps run times in milliseconds (its JSON's `runtime` and
/// `job_runtime` are ms; `--runtime=500us` reports 0 ms), and a run of microseconds completes
/// next to no I/O (QA: `--runtime 1us` measured 0 I/Os and was saved as a success).
pub const MIN_RUNTIME: Duration = Duration::from_millis(1);

/// Upper bounds that keep a typo from allocating the machine away.
const MAX_BS: u64 = 256 << 20;
const MAX_IODEPTH: u32 = 4096;
const MAX_NUMJOBS: u32 = 1024;
/// Most bytes of I/O buffers held at once: each of a job's numjobs threads keeps iodepth
/// buffers of bs bytes, so the bound is on numjobs x iodepth x bs, not on one thread's share
/// (QA: numjobs=1024 iodepth=2047 bs=1m passed a per-thread check and asked for 2 TiB).
pub const MAX_BUFFERS: u64 = 2 << 30;

fn bad(option: &'static str, value: impl ToString, fix: impl Into<Advice>) -> EngineError {
    EngineError::BadOption {
        option,
        value: value.to_string(),
        fix: fix.into(),
    }
}

impl Job {
    /// Bytes of I/O buffers the job holds while it runs: iodepth buffers of bs bytes in each of
    /// its numjobs threads.
    pub fn buffer_bytes(&self) -> u64 {
        self.bs
            .saturating_mul(u64::from(self.iodepth))
            .saturating_mul(u64::from(self.numjobs))
    }

    /// Checks the options on their own (the target is checked when the job runs).
    pub fn validate(&self) -> Result<(), EngineError> {
        use crate::advice::OptionName::{Bs, Fdatasync, Fsync, Iodepth, Numjobs, Runtime};
        if self.name.is_empty() || self.name.contains('/') || self.name.contains('\0') {
            return Err(bad(
                "name",
                &self.name,
                "use a non-empty name without '/' (it names the per-job files)",
            ));
        }
        if self.target.as_os_str().is_empty() {
            return Err(bad(
                "target",
                "",
                "give a file, a directory or a block device",
            ));
        }
        if self.bs == 0 || self.bs > MAX_BS {
            return Err(bad(
                "bs",
                self.bs,
                "use a block size from 1 byte to 256 MiB",
            ));
        }
        if self.numjobs == 0 || self.numjobs > MAX_NUMJOBS {
            return Err(bad("numjobs", self.numjobs, "use 1 to 1024 jobs"));
        }
        if self.iodepth == 0 || self.iodepth > MAX_IODEPTH {
            return Err(bad(
                "iodepth",
                self.iodepth,
                "use an iodepth from 1 to 4096",
            ));
        }
        if self.buffer_bytes() > MAX_BUFFERS {
            return Err(bad(
                "iodepth",
                self.iodepth,
                advice![
                    format!(
                        "numjobs={} x iodepth={} x bs={} = {} MiB of I/O buffers held at once: keep it at 2 GiB or less (lower ",
                        self.numjobs,
                        self.iodepth,
                        self.bs,
                        self.buffer_bytes() >> 20
                    ),
                    Numjobs,
                    ", ",
                    Iodepth,
                    " or ",
                    Bs,
                    ")"
                ],
            ));
        }
        if self.iodepth_batch_submit > MAX_IODEPTH {
            return Err(bad(
                "iodepth_batch_submit",
                self.iodepth_batch_submit,
                "use 1 (each I/O as it is ready, the default) up to 4096, or 0 for iodepth",
            ));
        }
        if !self.cpus_allowed.is_empty() {
            parse_cpu_list(&self.cpus_allowed).map_err(|why| {
                bad(
                    "cpus_allowed",
                    &self.cpus_allowed,
                    format!("{why}: give CPU numbers and ranges from 0, e.g. 0 or 0-3,6"),
                )
            })?;
        }
        if self.rwmixread > 100 {
            return Err(bad(
                "rwmixread",
                self.rwmixread,
                "use a percentage from 0 to 100",
            ));
        }
        if self.fsync > 0 && self.fdatasync > 0 {
            return Err(bad(
                "fdatasync",
                self.fdatasync,
                advice![Pass, " either ", Fsync, " or ", Fdatasync, ", not both"],
            ));
        }
        if let Some(s) = self.size {
            if s == 0 {
                return Err(bad("size", 0, "use a size of at least one block, e.g. 1G"));
            }
            if s < self.bs {
                return Err(bad(
                    "size",
                    s,
                    format!("size must hold at least one block of bs={}", self.bs),
                ));
            }
        }
        if self.time_based && self.runtime.is_none() {
            return Err(bad(
                "time_based",
                "true",
                advice![
                    "time_based needs a runtime: ",
                    Pass,
                    " ",
                    Runtime,
                    " (e.g. ",
                    Runtime.with("60s"),
                    ")"
                ],
            ));
        }
        if let Some(r) = self.runtime {
            if r < MIN_RUNTIME {
                return Err(bad(
                    "runtime",
                    dur::to_string(&r),
                    "use at least 1ms (fio counts run time in milliseconds; a shorter run completes next to no I/O), e.g. 60s, or leave it out for no limit",
                ));
            }
        }
        for (option, value) in [("bs", self.bs), ("offset", self.offset)] {
            if self.direct && !value.is_multiple_of(512) {
                // The device's own logical block size is checked against the target later; 512
                // is the smallest any Linux block device has (Documentation/block/queue-sysfs.rst).
                return Err(EngineError::DirectAlignment {
                    path: self.target.clone(),
                    option,
                    value,
                    align: 512,
                });
            }
        }
        Ok(())
    }

    /// Whether the job issues fsync/fdatasync calls.
    pub fn syncs(&self) -> bool {
        self.rw.writes() && (self.fsync > 0 || self.fdatasync > 0)
    }

    /// The job as JSON, with fio's option names (for `RunDoc.job`). Every field has a JSON
    /// form (the target's path is written lossily), so nothing here can fail.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// A path as a string, its bytes that are not UTF-8 replaced by U+FFFD.
fn lossy_path<S: serde::Serializer>(p: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

/// Durations as fio spells them in JSON ("60s", "500ms"); numbers are read as seconds.
mod dur {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    /// As every duration is shown (`disktier_units::fmt_duration`).
    pub fn to_string(d: &Duration) -> String {
        disktier_units::fmt_duration(*d)
    }

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&to_string(d))
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    pub enum Raw {
        Num(f64),
        Str(String),
    }

    pub fn parse(r: Raw) -> Result<Duration, String> {
        match r {
            // try_: a huge number (1e308) is an error, not a panic (found by fuzz_job_options).
            Raw::Num(n) if n >= 0.0 => {
                Duration::try_from_secs_f64(n).map_err(|_| format!("{n} s is not a duration"))
            }
            Raw::Num(n) => Err(format!("{n} is not a duration")),
            Raw::Str(s) => disktier_units::parse_duration(&s).map_err(|e| e.to_string()),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        parse(Raw::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

mod dur_opt {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_str(&super::dur::to_string(d)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        match Option::<super::dur::Raw>::deserialize(d)? {
            None => Ok(None),
            Some(r) => super::dur::parse(r)
                .map(Some)
                .map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests;
