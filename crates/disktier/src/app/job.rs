//! fio-style job options shared by `bench`, `check`, `trace record`, `assess` and job files:
//! every option has fio's name with `-` for `_` (`--ioengine`, `--time-based`, `--ramp-time`),
//! boolean options are flags that also take `=false`, sizes and durations take fio's spellings.
//! [`JobOptions`] holds what the user gave (the commands flatten it into their command lines,
//! and a job file's options go through the same parser, `app::jobfile`'s `FileOptions`; any
//! other runner fills its fields); [`resolve`] lays it over a profile's job (or fio's defaults)
//! and returns a checked [`disktier_engine::Job`].

use anyhow::{bail, Context};
use disktier_engine::{IoEngineKind, Job, Profile, Rw, Workload};
use disktier_units::clap_parsers;
use std::path::Path;
use std::time::Duration;

/// The job options, each `None` unless the user gave it.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Job options (fio's names and defaults)")]
pub struct JobOptions {
    /// I/O pattern: read, write, randread, randwrite, readwrite, randrw.
    #[arg(long, alias = "readwrite", value_parser = parse_rw, value_name = "PATTERN")]
    pub rw: Option<Rw>,
    /// Percentage of reads in a readwrite/randrw job [default: 50].
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub rwmixread: Option<u32>,
    /// Block size, any number of bytes (2300, 4k, 1M) [default: 4k].
    #[arg(long, alias = "blocksize", value_parser = clap_parsers::size, value_name = "SIZE")]
    pub bs: Option<u64>,
    /// Bytes each job works on (22m, 10G); default: the whole file or device. For the
    /// small-files profile: the bytes of all its files together.
    #[arg(long, value_parser = clap_parsers::size, value_name = "SIZE")]
    pub size: Option<u64>,
    /// Number of files: the small-files profile's count (default 100,000 of 1 MiB; with --size,
    /// the size is divided between them, as fio does). A job uses one file per thread.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub nrfiles: Option<u64>,
    /// Start offset in the file or device [default: 0].
    #[arg(long, value_parser = clap_parsers::size, value_name = "SIZE")]
    pub offset: Option<u64>,
    /// Number of parallel jobs (threads), each on its own file in a directory [default: 1].
    #[arg(long, value_name = "N")]
    pub numjobs: Option<u32>,
    /// I/Os in flight per job (io_uring only; psync and sync do one at a time) [default: 1].
    #[arg(long, value_name = "N")]
    pub iodepth: Option<u32>,
    /// How I/O is issued: io_uring, psync or sync (libaio runs as io_uring, with a note)
    /// [default: io_uring].
    #[arg(long, value_parser = parse_ioengine, value_name = "ENGINE")]
    pub ioengine: Option<IoEngineArg>,
    /// O_DIRECT: bypass the page cache (`--direct`, or `--direct=false`).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    pub direct: Option<bool>,
    /// fsync after every N writes (0 = never), timed on its own as the "sync" latency.
    #[arg(long, value_name = "N")]
    pub fsync: Option<u32>,
    /// fdatasync after every N writes (0 = never), timed on its own as the "sync" latency.
    #[arg(long, value_name = "N")]
    pub fdatasync: Option<u32>,
    /// Stop after this long (60s, 500ms, 2m).
    #[arg(long, value_parser = clap_parsers::duration, value_name = "DURATION")]
    pub runtime: Option<Duration>,
    /// Keep going for the whole runtime, wrapping around the size (`--time-based`, or `=false`).
    #[arg(long, alias = "time_based", num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    pub time_based: Option<bool>,
    /// Run this long before measuring.
    #[arg(long, alias = "ramp_time", value_parser = clap_parsers::duration, value_name = "DURATION")]
    pub ramp_time: Option<Duration>,
    /// Seed of the random offsets (fio's default, so runs repeat).
    #[arg(long, value_name = "N")]
    pub randseed: Option<u64>,
    /// I/Os per submission, as fio: 1 submits each I/O as soon as a slot is free, 0 means
    /// iodepth [default: 1].
    #[arg(long, aliases = ["iodepth_batch_submit", "iodepth-batch", "iodepth_batch"], value_name = "N")]
    pub iodepth_batch_submit: Option<u32>,
    /// fio's most completions reaped at once: disktier reaps every completed I/O (up to
    /// iodepth) each time, so only a value of at least iodepth is accepted (the GKE recipe's
    /// --iodepth_batch_complete_max=256 at iodepth 256).
    #[arg(
        long,
        hide = true,
        alias = "iodepth_batch_complete_max",
        value_name = "N"
    )]
    pub iodepth_batch_complete_max: Option<u32>,
    /// fio's data verification: disktier does not verify, so only verify=0 (fio's default) is
    /// accepted.
    #[arg(long, hide = true, value_parser = parse_verify, value_name = "0")]
    pub verify: Option<u32>,
    /// fio's group_reporting: disktier always reports a job's numjobs threads together, so
    /// this changes nothing (=0 with numjobs above 1 is refused).
    #[arg(long, hide = true, alias = "group_reporting", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new(),
          value_name = "BOOL")]
    pub group_reporting: Option<bool>,
    /// CPUs the job threads may run on, fio's list form (0, 0-3,6); default: any.
    // Not empty: "" read as "any CPU" silently (QA); leaving the option out says that.
    #[arg(long, alias = "cpus_allowed", value_name = "LIST",
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub cpus_allowed: Option<String>,
    /// Random offsets drawn with replacement, instead of every block once per pass (fio's
    /// default random map) (`--norandommap`, or `=false`).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    pub norandommap: Option<bool>,
    /// Job name (names the per-job files `<name>.<jobnum>.0` in a directory).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

fn parse_rw(s: &str) -> Result<Rw, String> {
    Rw::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Rw::ALL.iter().map(|r| r.name()).collect();
        format!("unknown rw `{s}`: use one of {}", names.join(", "))
    })
}

/// `--ioengine`: the engine that runs, and whether the user asked for libaio (which runs as
/// io_uring, as in a job file, with a note in the result).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoEngineArg {
    pub kind: IoEngineKind,
    pub libaio: bool,
}

/// What a result says when `ioengine=libaio` ran through io_uring.
pub const LIBAIO_NOTE: &str = "ioengine=libaio runs through io_uring with the same queue-depth semantics: iodepth I/Os in flight per job thread, submitted as iodepth_batch_submit says";

fn parse_ioengine(s: &str) -> Result<IoEngineArg, String> {
    if s == "libaio" {
        // The GKE recipe's fio jobs use libaio; io_uring keeps iodepth I/Os in flight the same
        // way (docs/engine.md, "Profiles").
        return Ok(IoEngineArg {
            kind: IoEngineKind::IoUring,
            libaio: true,
        });
    }
    IoEngineKind::from_name(s)
        .map(|kind| IoEngineArg {
            kind,
            libaio: false,
        })
        .ok_or_else(|| match s {
            "posixaio" | "mmap" | "splice" | "pvsync2" => format!(
                "ioengine `{s}` is fio's, not disktier's native engine: use io_uring (queue depth; libaio runs as it), psync or sync, or run it through fio with --engine fio"
            ),
            _ => format!("unknown ioengine `{s}`: use io_uring, libaio (runs as io_uring), psync or sync"),
        })
}

/// fio's `verify`: disktier writes and reads without verifying, which is fio's `verify=0`.
fn parse_verify(s: &str) -> Result<u32, String> {
    match s {
        "0" => Ok(0),
        _ => Err(format!(
            "verify={s}: disktier does not verify the data it writes; only verify=0 (fio's default, no verification) is accepted; for verification run a fio job file with --engine fio"
        )),
    }
}

impl JobOptions {
    /// Whether the user gave any job option at all.
    pub fn any(&self) -> bool {
        !self.given().is_empty()
    }

    /// The names of the options the user gave (fio's spelling with dashes).
    pub fn given(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        macro_rules! given {
            ($($field:ident => $name:literal),* $(,)?) => {
                $( if self.$field.is_some() { v.push($name); } )*
            };
        }
        given!(rw => "--rw", rwmixread => "--rwmixread", bs => "--bs", size => "--size",
            nrfiles => "--nrfiles",
            offset => "--offset", numjobs => "--numjobs", iodepth => "--iodepth",
            ioengine => "--ioengine", direct => "--direct", fsync => "--fsync",
            fdatasync => "--fdatasync", runtime => "--runtime", time_based => "--time-based",
            ramp_time => "--ramp-time", randseed => "--randseed",
            iodepth_batch_submit => "--iodepth-batch-submit",
            iodepth_batch_complete_max => "--iodepth-batch-complete-max",
            verify => "--verify", group_reporting => "--group-reporting",
            norandommap => "--norandommap",
            cpus_allowed => "--cpus-allowed",
            name => "--name");
        v
    }

    /// Whether `--ioengine libaio` was given (it runs as io_uring; the result says so).
    pub fn libaio(&self) -> bool {
        self.ioengine.is_some_and(|e| e.libaio)
    }

    /// The options that are accepted for fio compatibility when they change nothing, checked
    /// against the job they apply to: refused, with the reason, where they would change what
    /// is measured.
    pub fn check(&self, job: &Job) -> anyhow::Result<()> {
        if let Some(m) = self.iodepth_batch_complete_max {
            if m < job.iodepth {
                bail!(
                    "iodepth_batch_complete_max={m} is below iodepth={}: disktier reaps every completed I/O at once (up to iodepth), as fio does with iodepth_batch_complete_max=iodepth; reaping at most {m} at a time is not supported: drop the option, or raise it to {}",
                    job.iodepth,
                    job.iodepth
                );
            }
        }
        if self.group_reporting == Some(false) && job.numjobs > 1 {
            bail!(
                "group_reporting=0 with numjobs={}: disktier reports a job's threads together (as fio's group_reporting); per-thread figures are not supported: drop group_reporting=0",
                job.numjobs
            );
        }
        if let Some(n) = self.nrfiles.filter(|n| *n != 1) {
            bail!(
                "nrfiles={n}: a job runs on one file per thread (numjobs); --nrfiles is for the small-files profile: use --numjobs for more files, or --profile small-files"
            );
        }
        Ok(())
    }

    /// Lays the given options over `job`.
    pub fn apply(&self, mut job: Job) -> Job {
        macro_rules! set {
            ($($field:ident),*) => { $( if let Some(v) = self.$field.clone() { job.$field = v; } )* };
        }
        if let Some(e) = self.ioengine {
            job.ioengine = e.kind;
        }
        set!(
            rw,
            rwmixread,
            bs,
            offset,
            numjobs,
            iodepth,
            direct,
            fsync,
            fdatasync,
            time_based,
            ramp_time,
            randseed,
            iodepth_batch_submit,
            norandommap,
            cpus_allowed,
            name
        );
        if let Some(s) = self.size {
            job.size = Some(s);
        }
        if let Some(r) = self.runtime {
            job.runtime = Some(r);
        }
        // fio's rule: fsync and fdatasync are separate options; the one the user named wins
        // over the profile's other one instead of tripping "not both".
        if self.fsync.is_some_and(|n| n > 0) && self.fdatasync.is_none() {
            job.fdatasync = 0;
        }
        if self.fdatasync.is_some_and(|n| n > 0) && self.fsync.is_none() {
            job.fsync = 0;
        }
        job
    }
}

/// "etcd, etcd-openshift, ..." for messages.
pub fn profile_names() -> String {
    Profile::all()
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per profile with its description, for errors and help.
pub fn profile_list() -> String {
    Profile::all()
        .iter()
        .map(|p| format!("  {:<17} {}", p.name(), p.description()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Looks a profile up by name, with the list in the error.
pub fn profile(name: &str) -> anyhow::Result<Profile> {
    Profile::from_name(name)
        .with_context(|| format!("unknown profile `{name}`: use one of {}", profile_names()))
}

/// Resolves what to run on `target`: the profile's workload (scaled down when `quick`) with the
/// user's job options over it, or — without a profile — an ad-hoc job from fio's defaults, which
/// needs at least `--rw`. The job is validated before it is returned.
pub fn resolve(
    target: &Path,
    profile: Option<Profile>,
    quick: bool,
    args: &JobOptions,
) -> anyhow::Result<Workload> {
    let base = match profile {
        Some(p) => p.workload(target, quick),
        None => {
            if args.rw.is_none() {
                bail!(
                    "no workload for {}: pass --profile NAME or at least --rw (fio-style options); profiles:\n{}",
                    target.display(),
                    profile_list()
                );
            }
            Workload::Job(Job {
                target: target.to_path_buf(),
                ..Job::default()
            })
        }
    };
    let w = match base {
        Workload::Job(job) => {
            let mut job = args.apply(job);
            if quick && profile.is_none() {
                quick_ad_hoc(&mut job);
            }
            args.check(&job)?;
            Workload::Job(job)
        }
        Workload::SmallFiles {
            dir,
            files,
            file_size,
        } => small_files(args, dir, files, file_size)?,
    };
    if let Workload::Job(j) = &w {
        // The target's O_DIRECT before the job's alignment for it (tmpfs takes no --bs fix).
        disktier_engine::validate_for_target(j)?;
    }
    Ok(w)
}

/// The small-files profile scaled by `--nrfiles` and `--size` (fio's meaning: the size is
/// divided between the files), the only options it takes: N files of 1 MiB, or SIZE in files
/// of 1 MiB, or SIZE in N files. The instance-store recipe's 100,000 files need about 100 GB
/// free; these let it run where less is.
fn small_files(
    args: &JobOptions,
    dir: std::path::PathBuf,
    files: u64,
    file_size: u64,
) -> anyhow::Result<Workload> {
    let other: Vec<&str> = args
        .given()
        .into_iter()
        .filter(|o| !matches!(*o, "--nrfiles" | "--size"))
        .collect();
    if !other.is_empty() {
        bail!(
            "the small-files profile takes only --nrfiles and --size (got {}): it writes files of 1 MiB like the instance-store performance recipe's dd loop; drop the others or pick another profile",
            other.join(", ")
        );
    }
    let (files, file_size) = match (args.nrfiles, args.size) {
        (None, None) => (files, file_size),
        (Some(n), None) => (n, file_size),
        (None, Some(total)) => ((total / file_size).max(1), file_size.min(total)),
        (Some(n), Some(total)) => {
            if total < n {
                bail!(
                    "--size {total} for --nrfiles {n} leaves less than a byte per file: give a larger --size or fewer files"
                );
            }
            (n, total / n)
        }
    };
    if file_size > disktier_engine::smallfiles::MAX_FILE_SIZE {
        bail!(
            "{} per file is more than the 256 MiB one file may have (each is written from one buffer): give more --nrfiles or a smaller --size",
            disktier_units::Bytes(file_size)
        );
    }
    Ok(Workload::SmallFiles {
        dir,
        files,
        file_size,
    })
}

/// `--quick` on an ad-hoc job: cap its runtime at 5 s and its size at 256 MiB, the same bounds
/// the profiles' quick versions use, so a quick run stays quick.
fn quick_ad_hoc(job: &mut Job) {
    const QUICK_RUNTIME: Duration = Duration::from_secs(5);
    const QUICK_SIZE: u64 = 256 << 20;
    job.runtime = Some(job.runtime.map_or(QUICK_RUNTIME, |r| r.min(QUICK_RUNTIME)));
    if let Some(s) = job.size {
        job.size = Some(s.min(QUICK_SIZE).max(job.bs));
    }
}

#[cfg(test)]
#[path = "job/tests.rs"]
mod tests;
