//! fio-style job options shared by `bench`, `check`, `trace record` and `assess`: every option
//! has fio's name with `-` for `_` (`--ioengine`, `--time-based`, `--ramp-time`), boolean
//! options are flags that also take `=false`, sizes and durations take fio's spellings.
//! [`JobArgs`] holds what the user typed; [`resolve`] lays it over a profile's job (or fio's
//! defaults) and returns a checked [`disktier_engine::Job`].

use anyhow::{bail, Context};
use disktier_engine::{IoEngineKind, Job, Profile, Rw, Workload};
use disktier_units::clap_parsers;
use std::path::Path;
use std::time::Duration;

/// Which engine runs the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineChoice {
    /// disktier's own engine (io_uring, psync, sync), with HDR latency histograms.
    Native,
    /// fio, with its JSON read into the same result document (fio must be installed).
    Fio,
}

impl From<EngineChoice> for crate::app::measure::Tool {
    fn from(e: EngineChoice) -> Self {
        match e {
            EngineChoice::Native => Self::Native,
            EngineChoice::Fio => Self::Fio,
        }
    }
}

/// Options of a run that are not job options: shared by `bench` and `check`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Engine that runs the job.
    #[arg(long, value_enum, default_value_t = EngineChoice::Native)]
    pub engine: EngineChoice,
    /// Keep the files disktier created (they are removed after the run by default).
    #[arg(long)]
    pub keep_files: bool,
    /// Allow write jobs on a block device that holds a filesystem, a partition table, a mount or
    /// holders. Its data will be destroyed.
    #[arg(long)]
    pub destructive: bool,
    /// Do not fill files with data before read jobs: a short file is only extended (sparse),
    /// with either engine. A file that already has the size is never rewritten.
    #[arg(long)]
    pub no_layout: bool,
}

/// The job options, each `None` unless the user gave it.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Job options (fio's names and defaults)")]
pub struct JobArgs {
    /// I/O pattern: read, write, randread, randwrite, readwrite, randrw.
    #[arg(long, value_parser = parse_rw, value_name = "PATTERN")]
    pub rw: Option<Rw>,
    /// Percentage of reads in a readwrite/randrw job [default: 50].
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub rwmixread: Option<u32>,
    /// Block size, any number of bytes (2300, 4k, 1M) [default: 4k].
    #[arg(long, value_parser = clap_parsers::size, value_name = "SIZE")]
    pub bs: Option<u64>,
    /// Bytes each job works on (22m, 10G); default: the whole file or device.
    #[arg(long, value_parser = clap_parsers::size, value_name = "SIZE")]
    pub size: Option<u64>,
    /// Start offset in the file or device [default: 0].
    #[arg(long, value_parser = clap_parsers::size, value_name = "SIZE")]
    pub offset: Option<u64>,
    /// Number of parallel jobs (threads), each on its own file in a directory [default: 1].
    #[arg(long, value_name = "N")]
    pub numjobs: Option<u32>,
    /// I/Os in flight per job (io_uring only; psync and sync do one at a time) [default: 1].
    #[arg(long, value_name = "N")]
    pub iodepth: Option<u32>,
    /// How I/O is issued: io_uring, psync or sync [default: io_uring].
    #[arg(long, value_parser = parse_ioengine, value_name = "ENGINE")]
    pub ioengine: Option<IoEngineKind>,
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
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    pub time_based: Option<bool>,
    /// Run this long before measuring.
    #[arg(long, value_parser = clap_parsers::duration, value_name = "DURATION")]
    pub ramp_time: Option<Duration>,
    /// Seed of the random offsets (fio's default, so runs repeat).
    #[arg(long, value_name = "N")]
    pub randseed: Option<u64>,
    /// I/Os per submission, as fio: 1 submits each I/O as soon as a slot is free, 0 means
    /// iodepth [default: 1].
    #[arg(long, value_name = "N")]
    pub iodepth_batch_submit: Option<u32>,
    /// CPUs the job threads may run on, fio's list form (0, 0-3,6); default: any.
    #[arg(long, value_name = "LIST")]
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

fn parse_ioengine(s: &str) -> Result<IoEngineKind, String> {
    IoEngineKind::from_name(s).ok_or_else(|| match s {
        "libaio" | "posixaio" | "mmap" | "splice" | "pvsync2" => format!(
            "ioengine `{s}` is fio's, not disktier's native engine: use io_uring (queue depth), psync or sync, or run it through fio with --engine fio"
        ),
        _ => format!("unknown ioengine `{s}`: use io_uring, psync or sync"),
    })
}

impl JobArgs {
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
            offset => "--offset", numjobs => "--numjobs", iodepth => "--iodepth",
            ioengine => "--ioengine", direct => "--direct", fsync => "--fsync",
            fdatasync => "--fdatasync", runtime => "--runtime", time_based => "--time-based",
            ramp_time => "--ramp-time", randseed => "--randseed",
            iodepth_batch_submit => "--iodepth-batch-submit", norandommap => "--norandommap",
            cpus_allowed => "--cpus-allowed",
            name => "--name");
        v
    }

    /// Lays the given options over `job`.
    pub fn apply(&self, mut job: Job) -> Job {
        macro_rules! set {
            ($($field:ident),*) => { $( if let Some(v) = self.$field.clone() { job.$field = v; } )* };
        }
        set!(
            rw,
            rwmixread,
            bs,
            offset,
            numjobs,
            iodepth,
            ioengine,
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
    args: &JobArgs,
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
            Workload::Job(job)
        }
        Workload::SmallFiles { .. } if args.any() => bail!(
            "the small-files profile takes no job options (got {}): it writes files of 1 MiB like the instance-store performance recipe's dd loop; drop the options or pick another profile",
            args.given().join(", ")
        ),
        w => w,
    };
    if let Workload::Job(j) = &w {
        j.validate()?;
    }
    Ok(w)
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
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct T {
        target: std::path::PathBuf,
        #[command(flatten)]
        job: JobArgs,
    }

    fn parse(args: &[&str]) -> T {
        T::try_parse_from(std::iter::once("t").chain(args.iter().copied())).unwrap()
    }

    fn job(w: Workload) -> Job {
        match w {
            Workload::Job(j) => j,
            w => panic!("not a job: {w:?}"),
        }
    }

    #[test]
    fn fio_names_with_dashes_and_fio_spellings() {
        let t = parse(&[
            "/dev/x",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "256",
            "--runtime",
            "60s",
            "--direct",
            "--ioengine",
            "psync",
            "--ramp-time",
            "2s",
            "--time-based",
            "--iodepth-batch-submit",
            "16",
            "--size",
            "10G",
            "--rwmixread",
            "70",
        ]);
        assert_eq!(
            t.target,
            Path::new("/dev/x"),
            "--direct must not swallow the target"
        );
        let j = job(resolve(&t.target, None, false, &t.job).unwrap());
        assert_eq!(j.rw, Rw::RandRead);
        assert_eq!(j.bs, 4096);
        assert_eq!(j.iodepth, 256);
        assert_eq!(j.runtime, Some(Duration::from_secs(60)));
        assert!(j.direct && j.time_based);
        assert_eq!(j.ioengine, IoEngineKind::Psync);
        assert_eq!(j.ramp_time, Duration::from_secs(2));
        assert_eq!(j.iodepth_batch_submit, 16);
        assert_eq!(j.size, Some(10 << 30));
        assert_eq!(j.rwmixread, 70);
    }

    #[test]
    fn boolean_flags_take_false() {
        let t = parse(&["/d", "--direct=false", "--time-based=0"]);
        assert_eq!(t.job.direct, Some(false));
        assert_eq!(t.job.time_based, Some(false));
        let t = parse(&["--direct", "/d"]);
        assert_eq!(
            (t.job.direct, t.target.as_path()),
            (Some(true), Path::new("/d"))
        );
        assert!(T::try_parse_from(["t", "/d", "--direct=maybe"]).is_err());
    }

    #[test]
    fn profile_then_overrides() {
        let t = parse(&["/var/lib/etcd", "--size", "30m", "--direct=false"]);
        let j = job(resolve(&t.target, Some(Profile::Etcd), false, &t.job).unwrap());
        // The OSTree-vs-etcd issue [recipe-mco-ostree-etcd] runs the etcd job with --size=30m: only
        // the size changes.
        assert_eq!(j.size, Some(30 << 20));
        assert_eq!((j.bs, j.fdatasync, j.rw), (2300, 1, Rw::Write));
        assert_eq!(j.ioengine, IoEngineKind::Sync);
        assert_eq!(j.target, Path::new("/var/lib/etcd"));
        // --fsync on the etcd profile replaces its fdatasync instead of conflicting.
        let t = parse(&["/d", "--fsync", "1"]);
        let j = job(resolve(&t.target, Some(Profile::Etcd), false, &t.job).unwrap());
        assert_eq!((j.fsync, j.fdatasync), (1, 0));
    }

    #[test]
    fn no_profile_and_no_rw_lists_the_profiles() {
        let t = parse(&["/d", "--bs", "4k"]);
        let e = resolve(&t.target, None, false, &t.job)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--profile") && e.contains("--rw"), "{e}");
        for p in Profile::all() {
            assert!(e.contains(p.name()), "{e}");
        }
    }

    #[test]
    fn bad_values_are_refused_with_the_option_named() {
        for bad in [
            vec!["/d", "--rw", "trim"],
            vec!["/d", "--bs", "4q"],
            vec!["/d", "--ioengine", "libaio"],
            vec!["/d", "--rwmixread", "101"],
            vec!["/d", "--runtime", "soon"],
        ] {
            assert!(
                T::try_parse_from(std::iter::once("t").chain(bad.clone())).is_err(),
                "{bad:?}"
            );
        }
        let e = parse_ioengine("libaio").unwrap_err();
        assert!(e.contains("--engine fio"), "{e}");
        // Checked after resolution: the engine's validation names the option.
        let t = parse(&["/d", "--rw", "read", "--bs", "0"]);
        let e = resolve(&t.target, None, false, &t.job)
            .unwrap_err()
            .to_string();
        assert!(e.contains("bs=0"), "{e}");
        let t = parse(&["/d", "--rw", "write", "--bs", "2300", "--direct"]);
        let e = resolve(&t.target, None, false, &t.job)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--direct=false"), "{e}");
    }

    #[test]
    fn quick_caps_ad_hoc_jobs_and_small_files_refuse_options() {
        let t = parse(&["/d", "--rw", "read", "--runtime", "60s", "--size", "10G"]);
        let j = job(resolve(&t.target, None, true, &t.job).unwrap());
        assert_eq!(j.runtime, Some(Duration::from_secs(5)));
        assert_eq!(j.size, Some(256 << 20));
        let t = parse(&["/d", "--bs", "4k"]);
        let e = resolve(&t.target, Some(Profile::SmallFiles), true, &t.job).unwrap_err();
        assert!(e.to_string().contains("--bs"), "{e}");
        assert!(resolve(
            &t.target,
            Some(Profile::SmallFiles),
            true,
            &JobArgs::default()
        )
        .is_ok());
    }

    #[test]
    fn unknown_profile_lists_the_names() {
        let e = profile("etc").unwrap_err().to_string();
        assert!(
            e.contains("etcd-openshift") && e.contains("small-files"),
            "{e}"
        );
    }

    /// Fuzz target (bolero, #13): fio-style job options as the user types them (NUL- or
    /// newline-separated argv), with or without a profile: parsing and resolving give a job or
    /// an error, never a panic; a resolved job gives a fio command line without NUL and a plan
    /// whose first I/Os stay in the region. Corpus: `tests/__fuzz__/fuzz_jobargs/corpus` (argv
    /// one per line), whose seeds random inputs also edit.
    #[test]
    fn fuzz_jobargs() {
        use disktier_testkit::fuzz::{mutate, seeds, timed, BRIEF, MAX_INPUT};
        #[derive(Debug, Parser)]
        struct Bench {
            #[command(flatten)]
            job: JobArgs,
            #[arg(long)]
            profile: Option<String>,
            #[arg(long)]
            quick: bool,
        }
        let seeds = seeds(env!("CARGO_MANIFEST_DIR"), "fuzz_jobargs");
        assert!(!seeds.is_empty(), "the corpus is checked in");
        bolero::check!()
            .with_test_time(BRIEF)
            .with_max_len(MAX_INPUT)
            .for_each(move |raw: &[u8]| {
                // An empty input runs the corpus seeds themselves.
                let own: Vec<Vec<u8>> = if raw.is_empty() {
                    seeds.clone()
                } else {
                    Vec::new()
                };
                for input in own.into_iter().chain([raw.to_vec(), mutate(&seeds, raw)]) {
                    timed(&input, || {
                        let text = String::from_utf8_lossy(&input);
                        let argv = text.split(['\0', '\n']).filter(|a| !a.is_empty());
                        let Ok(b) = Bench::try_parse_from(std::iter::once("bench").chain(argv))
                        else {
                            return;
                        };
                        let profile = b.profile.as_deref().and_then(|p| profile(p).ok());
                        let target = Path::new("/var/tmp/disktier-fuzz-target");
                        let Ok(Workload::Job(j)) = resolve(target, profile, b.quick, &b.job) else {
                            return;
                        };
                        let cmd = disktier_engine::fio::command(&j, false);
                        assert!(cmd.args.iter().all(|a| !a.contains('\0')), "{cmd:?}");
                        let len = j.size.unwrap_or(1 << 20);
                        let mut plan = disktier_engine::plan::IoPlan::new(&j, 0, j.offset, len);
                        for _ in 0..64 {
                            let Some((_, off)) = plan.next_io() else {
                                break;
                            };
                            assert!(
                                off >= j.offset
                                    && off.saturating_add(j.bs) <= j.offset.saturating_add(len)
                            );
                        }
                    })
                }
            });
    }
}
