//! Tests of the job options: fio's names and spellings, profiles and overrides, refusals.

use super::*;
use clap::Parser;

#[derive(Debug, Parser)]
struct T {
    target: std::path::PathBuf,
    #[command(flatten)]
    job: JobOptions,
}

/// Parses a command line as a user types it (split at spaces), after the program's name.
fn parse(line: &str) -> T {
    T::try_parse_from(std::iter::once("t").chain(line.split_whitespace())).unwrap()
}

fn job(w: Workload) -> Job {
    match w {
        Workload::Job(j) => j,
        w => panic!("not a job: {w:?}"),
    }
}

#[test]
fn fio_names_with_dashes_and_fio_spellings() {
    let t = parse("/dev/x --rw randread --bs 4k --iodepth 256 --runtime 60s --direct --ioengine psync --ramp-time 2s --time-based --iodepth-batch-submit 16 --size 10G --rwmixread 70");
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
    let t = parse("/d --direct=false --time-based=0");
    assert_eq!(t.job.direct, Some(false));
    assert_eq!(t.job.time_based, Some(false));
    let t = parse("--direct /d");
    assert_eq!(
        (t.job.direct, t.target.as_path()),
        (Some(true), Path::new("/d"))
    );
    assert!(T::try_parse_from(["t", "/d", "--direct=maybe"]).is_err());
}

#[test]
fn profile_then_overrides() {
    let t = parse("/var/lib/etcd --size 30m --direct=false");
    let j = job(resolve(&t.target, Some(Profile::Etcd), false, &t.job).unwrap());
    // The OSTree-vs-etcd issue [recipe-mco-ostree-etcd] runs the etcd job with --size=30m: only
    // the size changes.
    assert_eq!(j.size, Some(30 << 20));
    assert_eq!((j.bs, j.fdatasync, j.rw), (2300, 1, Rw::Write));
    assert_eq!(j.ioengine, IoEngineKind::Sync);
    assert_eq!(j.target, Path::new("/var/lib/etcd"));
    // --fsync on the etcd profile replaces its fdatasync instead of conflicting.
    let t = parse("/d --fsync 1");
    let j = job(resolve(&t.target, Some(Profile::Etcd), false, &t.job).unwrap());
    assert_eq!((j.fsync, j.fdatasync), (1, 0));
}

#[test]
fn no_profile_and_no_rw_lists_the_profiles() {
    let t = parse("/d --bs 4k");
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
        vec!["/d", "--ioengine", "posixaio"],
        vec!["/d", "--rwmixread", "101"],
        vec!["/d", "--runtime", "soon"],
        vec!["/d", "--verify", "md5"],
    ] {
        assert!(
            T::try_parse_from(std::iter::once("t").chain(bad.clone())).is_err(),
            "{bad:?}"
        );
    }
    let e = parse_ioengine("posixaio").unwrap_err();
    assert!(e.contains("--engine fio"), "{e}");
    // Checked after resolution: the engine's validation names the option.
    let t = parse("/d --rw read --bs 0");
    let e = resolve(&t.target, None, false, &t.job)
        .unwrap_err()
        .to_string();
    assert!(e.contains("bs=0"), "{e}");
    let t = parse("/d --rw write --bs 2300 --direct");
    let e = resolve(&t.target, None, false, &t.job)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--direct=false"), "{e}");
}

#[test]
fn quick_caps_ad_hoc_jobs_and_small_files_refuse_options() {
    let t = parse("/d --rw read --runtime 60s --size 10G");
    let j = job(resolve(&t.target, None, true, &t.job).unwrap());
    assert_eq!(j.runtime, Some(Duration::from_secs(5)));
    assert_eq!(j.size, Some(256 << 20));
    let t = parse("/d --bs 4k");
    let e = resolve(&t.target, Some(Profile::SmallFiles), true, &t.job).unwrap_err();
    assert!(e.to_string().contains("--bs"), "{e}");
    assert!(resolve(
        &t.target,
        Some(Profile::SmallFiles),
        true,
        &JobOptions::default()
    )
    .is_ok());
}

/// QA: with 46 GB free, small-files (100,000 files of 1 MiB) said "pass a smaller --size",
/// which it refused. --nrfiles and --size scale it, as fio reads them.
#[test]
fn small_files_scale_by_nrfiles_and_size() {
    let sf = |args: &str| match resolve(
        Path::new("/d"),
        Some(Profile::SmallFiles),
        false,
        &parse(&format!("/d {args}")).job,
    )
    .unwrap()
    {
        Workload::SmallFiles {
            files, file_size, ..
        } => (files, file_size),
        w => panic!("{w:?}"),
    };
    assert_eq!(sf(""), (100_000, 1 << 20));
    assert_eq!(sf("--nrfiles 40000"), (40_000, 1 << 20));
    assert_eq!(sf("--size 40g"), (40_960, 1 << 20));
    assert_eq!(sf("--nrfiles 1000 --size 4m"), (1000, 4194));
    let e = resolve(
        Path::new("/d"),
        Some(Profile::SmallFiles),
        false,
        &parse("/d --nrfiles 2 --size 1g").job,
    )
    .unwrap_err();
    assert!(e.to_string().contains("256 MiB"), "{e}");
    // A job takes one file per thread.
    let e = resolve(
        Path::new("/d"),
        None,
        false,
        &parse("/d --rw read --nrfiles 4").job,
    )
    .unwrap_err();
    assert!(e.to_string().contains("small-files"), "{e}");
}

/// QA ([recipe-gke-local-ssd], [recipe-bcache-ebs] in docs/sources.md): the GKE recipe's fio command lines use libaio, verify=0,
/// group_reporting=1, iodepth_batch_complete_max and underscore names.
#[test]
fn the_gke_recipes_fio_options_are_accepted_where_they_change_nothing() {
    let t = parse("/d --time_based --runtime=60s --ramp_time=2s --ioengine=libaio --direct=1 --verify=0 --bs=4K --iodepth=256 --rw=randwrite --group_reporting=1 --iodepth_batch_submit=256 --iodepth_batch_complete_max=256 --size=10G");
    assert!(t.job.libaio());
    let j = job(resolve(&t.target, None, false, &t.job).unwrap());
    assert_eq!(j.ioengine, IoEngineKind::IoUring);
    assert_eq!((j.iodepth, j.iodepth_batch_submit), (256, 256));
    assert!(j.time_based && j.direct);
    assert_eq!(j.ramp_time, Duration::from_secs(2));
    // Refused with the reason where the engine would behave differently.
    let t = parse("/d --rw randread --iodepth 64 --iodepth_batch_complete_max=8");
    let e = resolve(&t.target, None, false, &t.job)
        .unwrap_err()
        .to_string();
    assert!(e.contains("reaps every completed I/O"), "{e}");
    let t = parse("/d --rw read --numjobs 4 --group_reporting=0");
    let e = resolve(&t.target, None, false, &t.job)
        .unwrap_err()
        .to_string();
    assert!(e.contains("together"), "{e}");
    let e = T::try_parse_from(["t", "/d", "--verify=md5"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not verify"), "{e}");
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
        job: JobOptions,
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
                    let Ok(b) = Bench::try_parse_from(std::iter::once("bench").chain(argv)) else {
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
