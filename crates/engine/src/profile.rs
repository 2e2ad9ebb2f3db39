//! The built-in profiles: the benchmarks the user recipes in docs/sources.md already run (etcd's
//! fio job, Google's persistent-disk jobs, the small-file test), as jobs the native engine runs,
//! and their `--quick` versions, scaled so that a suite of all of them finishes in under a minute.

use crate::job::{IoEngineKind, Job, Rw};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A named benchmark from the user recipes (docs/sources.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    Etcd,
    EtcdOpenshift,
    WriteIops,
    ReadIops,
    WriteThroughput,
    ReadThroughput,
    Latency,
    SmallFiles,
}

/// What a profile runs: a job, or the small-file test (which fio has no job for).
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    Job(Job),
    /// Create `files` files of `file_size` bytes in `dir` with write()+close, as `dd bs=1M count=1`
    /// does in a loop (the instance-store performance recipe [recipe-instance-store-perf]), timed
    /// from the first to the last.
    SmallFiles {
        dir: PathBuf,
        files: u64,
        file_size: u64,
    },
}

impl Workload {
    /// The target path the workload runs on.
    pub fn target(&self) -> &Path {
        match self {
            Workload::Job(j) => &j.target,
            Workload::SmallFiles { dir, .. } => dir,
        }
    }
}

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The instance-store performance recipe [recipe-instance-store-perf]: 100,000 files of 1 MiB (8
/// min 8 s on EBS gp3, 4 min 52 s on instance store).
pub const SMALL_FILES_DEFAULT: u64 = 100_000;
/// The most `--quick` lets the `etcd` profile run (it stops at its 4 MiB or at this, whichever
/// comes first): the other quick profiles' runtime (5 s), so a quick suite still takes under a
/// minute on a slow disk.
pub const QUICK_ETCD_CAP: Duration = Duration::from_secs(5);

/// `--quick`: enough files to see the rate, few enough to take seconds.
pub const SMALL_FILES_QUICK: u64 = 2_000;

impl Profile {
    pub fn all() -> &'static [Profile] {
        &[
            Profile::Etcd,
            Profile::EtcdOpenshift,
            Profile::WriteIops,
            Profile::ReadIops,
            Profile::WriteThroughput,
            Profile::ReadThroughput,
            Profile::Latency,
            Profile::SmallFiles,
        ]
    }

    pub fn name(&self) -> &'static str {
        match self {
            Profile::Etcd => "etcd",
            Profile::EtcdOpenshift => "etcd-openshift",
            Profile::WriteIops => "write-iops",
            Profile::ReadIops => "read-iops",
            Profile::WriteThroughput => "write-throughput",
            Profile::ReadThroughput => "read-throughput",
            Profile::Latency => "latency",
            Profile::SmallFiles => "small-files",
        }
    }

    pub fn from_name(s: &str) -> Option<Profile> {
        Profile::all().iter().copied().find(|p| p.name() == s)
    }

    pub fn description(&self) -> &'static str {
        match self {
            Profile::Etcd => "etcd's disk check: sequential 2300-byte writes, fdatasync after each, 22 MiB (the OpenShift etcd-perf image's classic job, as run in the OpenShift instance-disk and OSTree-vs-etcd recipes)",
            Profile::EtcdOpenshift => "the current OpenShift etcd-perf job: 8000-byte writes, fdatasync after each, 100 MiB, 60 s time-based (quay.io/openshift-scale/etcd-perf)",
            Profile::WriteIops => "Google's write IOPS job: 4 KiB random writes, iodepth 256, direct, 10 GiB, 60 s after a 2 s ramp (Google's disk performance docs, as run in the GKE local-SSD recipe)",
            Profile::ReadIops => "Google's read IOPS job: 4 KiB random reads, iodepth 256, direct, 10 GiB, 60 s after a 2 s ramp (Google's disk performance docs, as run in the GKE local-SSD recipe)",
            Profile::WriteThroughput => "Google's write throughput job: 1 MiB sequential writes, 16 jobs at iodepth 64, direct, 10 GiB each, 60 s after a 2 s ramp (Google's disk performance docs, as run in the GKE local-SSD recipe)",
            Profile::ReadThroughput => "Google's read throughput job: 1 MiB sequential reads, 16 jobs at iodepth 64, direct, 10 GiB each, 60 s after a 2 s ramp (Google's disk performance docs, as run in the GKE local-SSD recipe)",
            Profile::Latency => "unloaded latency: 4 KiB random reads at iodepth 1, direct, 30 s (1 GiB file in a directory, the whole device otherwise)",
            Profile::SmallFiles => "the instance-store performance recipe's small-file test: 100,000 files of 1 MiB written like `dd bs=1M count=1`, timed from the first to the last",
        }
    }

    /// Whether the profile measures a filesystem (it refuses a raw block device): etcd's jobs
    /// time fdatasync of a file, and small-files creates files.
    pub fn needs_filesystem(&self) -> bool {
        matches!(
            self,
            Profile::Etcd | Profile::EtcdOpenshift | Profile::SmallFiles
        )
    }

    /// The workload on `target`, scaled down when `quick`: sizes and runtimes chosen so that a
    /// suite of all eight profiles finishes in under a minute on a 2-core VM (issue #2), while
    /// keeping each job's shape (rw, bs, iodepth, direct, sync) unchanged.
    pub fn workload(&self, target: &Path, quick: bool) -> Workload {
        let base = Job {
            name: self.name().replace('-', "_"),
            target: target.to_path_buf(),
            ..Job::default()
        };
        let secs = Duration::from_secs;
        // The GKE local-SSD recipe [recipe-gke-local-ssd]: --direct=1 --time_based
        // --runtime=60s --ramp_time=2s --size=10G, as many I/Os submitted at once as in flight.
        let gke = |base: Job, rw: Rw, bs: u64, iodepth: u32, quick_size: u64| Job {
            rw,
            bs,
            iodepth,
            iodepth_batch_submit: iodepth,
            direct: true,
            size: Some(if quick { quick_size } else { 10 * GIB }),
            runtime: Some(if quick { secs(5) } else { secs(60) }),
            ramp_time: if quick { secs(1) } else { secs(2) },
            time_based: true,
            ..base
        };
        // etcd's disk check: fio --rw=write --ioengine=sync --fdatasync=1 with its --bs and --size.
        let etcd = |base: Job, bs: u64, size: u64| Job {
            rw: Rw::Write,
            ioengine: IoEngineKind::Sync,
            fdatasync: 1,
            bs,
            size: Some(size),
            ..base
        };
        let job = match self {
            // docs/sources.md [ocp-etcd-perf], as the OpenShift instance-disk recipe
            // [recipe-ocp-instance-disk] ran it: --size=22m --bs=2300
            // --quick: 4 MiB, and at most QUICK_ETCD_CAP (fio's --runtime without
            // --time_based: whichever comes first). Without the cap a slow disk (20 fdatasync'd
            // writes/s) took minutes over the 4 MiB's 1,800-odd writes (QA); only a disk slower
            // than about 360 of them a second meets the cap, and the check says it was cut short.
            Profile::Etcd if quick => Job {
                runtime: Some(QUICK_ETCD_CAP),
                ..etcd(base, 2300, 4 * MIB)
            },
            Profile::Etcd => etcd(base, 2300, 22 * MIB),
            // OpenShift etcd-perf: --size=100m --bs=8000 --runtime=60 --time_based=1
            Profile::EtcdOpenshift => Job {
                runtime: Some(if quick { secs(5) } else { secs(60) }),
                time_based: true,
                ..etcd(base, 8000, if quick { 16 * MIB } else { 100 * MIB })
            },
            // The GKE local-SSD recipe [recipe-gke-local-ssd]: --bs=4K --iodepth=256
            // --rw=randwrite|randread --iodepth_batch_submit=256
            Profile::WriteIops => gke(base, Rw::RandWrite, 4096, 256, 256 * MIB),
            Profile::ReadIops => gke(base, Rw::RandRead, 4096, 256, 256 * MIB),
            // The GKE local-SSD recipe [recipe-gke-local-ssd]: --numjobs=16 --bs=1M --iodepth=64
            // --rw=write|read --iodepth_batch_submit=64
            Profile::WriteThroughput | Profile::ReadThroughput => {
                let rw = if *self == Profile::WriteThroughput {
                    Rw::Write
                } else {
                    Rw::Read
                };
                Job {
                    numjobs: if quick { 4 } else { 16 },
                    ..gke(base, rw, MIB, 64, 128 * MIB)
                }
            }
            Profile::Latency => Job {
                rw: Rw::RandRead,
                bs: 4096,
                iodepth: 1,
                direct: true,
                // A directory needs a file size; a device is used whole.
                size: if is_block_device(target) {
                    None
                } else if quick {
                    Some(256 * MIB)
                } else {
                    Some(GIB)
                },
                runtime: Some(if quick { secs(5) } else { secs(30) }),
                time_based: true,
                ..base
            },
            Profile::SmallFiles => {
                return Workload::SmallFiles {
                    dir: target.to_path_buf(),
                    files: if quick {
                        SMALL_FILES_QUICK
                    } else {
                        SMALL_FILES_DEFAULT
                    },
                    file_size: MIB,
                }
            }
        };
        Workload::Job(job)
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

fn is_block_device(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p)
        .map(|m| m.file_type().is_block_device())
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(p: Profile, quick: bool) -> Job {
        match p.workload(Path::new("/data"), quick) {
            Workload::Job(j) => j,
            w => panic!("{p} is not a job: {w:?}"),
        }
    }

    #[test]
    fn names_round_trip_and_descriptions_cite_sources() {
        assert_eq!(Profile::all().len(), 8);
        for p in Profile::all() {
            assert_eq!(Profile::from_name(p.name()), Some(*p));
            let d = p.description();
            assert!(
                d.contains("recipe")
                    || d.contains("docs")
                    || d.contains("etcd-perf")
                    || *p == Profile::Latency,
                "{p}: {d}"
            );
        }
        assert_eq!(Profile::from_name("nope"), None);
    }

    #[test]
    fn etcd_is_the_etcd_docs_job() {
        let j = job(Profile::Etcd, false);
        assert_eq!(j.rw, Rw::Write);
        assert_eq!(j.ioengine, IoEngineKind::Sync);
        assert_eq!((j.fdatasync, j.fsync), (1, 0));
        assert_eq!(j.bs, 2300);
        assert_eq!(j.size, Some(22 * MIB));
        assert!(!j.direct && !j.time_based && j.runtime.is_none());
        assert_eq!((j.numjobs, j.iodepth), (1, 1));
        assert!(j.validate().is_ok());
    }

    #[test]
    fn etcd_openshift_is_the_etcd_perf_job() {
        let j = job(Profile::EtcdOpenshift, false);
        assert_eq!(
            (j.rw, j.ioengine, j.fdatasync),
            (Rw::Write, IoEngineKind::Sync, 1)
        );
        assert_eq!(j.bs, 8000);
        assert_eq!(j.size, Some(100 * MIB));
        assert_eq!(j.runtime, Some(Duration::from_secs(60)));
        assert!(j.time_based);
    }

    #[test]
    fn google_jobs_are_seed_002s() {
        // (profile, rw, (bs, iodepth, iodepth_batch_submit, numjobs))
        for (p, rw, shape) in [
            (Profile::WriteIops, Rw::RandWrite, (4096, 256, 256, 1)),
            (Profile::ReadIops, Rw::RandRead, (4096, 256, 256, 1)),
            (Profile::WriteThroughput, Rw::Write, (MIB, 64, 64, 16)),
            (Profile::ReadThroughput, Rw::Read, (MIB, 64, 64, 16)),
        ] {
            let j = job(p, false);
            assert_eq!(j.rw, rw, "{p}");
            assert_eq!(
                (j.bs, j.iodepth, j.iodepth_batch_submit, j.numjobs),
                shape,
                "{p}"
            );
            assert!(j.direct && j.time_based, "{p}");
            assert_eq!(j.size, Some(10 * GIB), "{p}");
            assert_eq!(j.runtime, Some(Duration::from_secs(60)), "{p}");
            assert_eq!(j.ramp_time, Duration::from_secs(2), "{p}");
            assert_eq!(j.ioengine, IoEngineKind::IoUring, "{p}");
        }
    }

    #[test]
    fn latency_and_small_files() {
        let j = job(Profile::Latency, false);
        assert_eq!((j.rw, j.bs, j.iodepth), (Rw::RandRead, 4096, 1));
        assert!(j.direct);
        assert_eq!(j.runtime, Some(Duration::from_secs(30)));
        match Profile::SmallFiles.workload(Path::new("/d"), false) {
            Workload::SmallFiles {
                dir,
                files,
                file_size,
            } => {
                assert_eq!(dir, Path::new("/d"));
                assert_eq!((files, file_size), (100_000, MIB));
            }
            w => panic!("{w:?}"),
        }
    }

    #[test]
    fn quick_scales_every_profile_down() {
        for p in Profile::all() {
            let (full, quick) = (
                p.workload(Path::new("/d"), false),
                p.workload(Path::new("/d"), true),
            );
            match (full, quick) {
                (Workload::Job(f), Workload::Job(q)) => {
                    assert!(q.validate().is_ok(), "{p}");
                    assert!(q.size <= f.size, "{p}");
                    // A size-based job's quick runtime is a cap where the full job has none.
                    match (q.runtime, f.runtime) {
                        (Some(_), None) => assert!(!q.time_based && q.size.is_some(), "{p}"),
                        (q, f) => assert!(q <= f, "{p}"),
                    }
                    assert!(q.numjobs <= f.numjobs, "{p}");
                    // A runtime adds work only to a time-based job (it caps a size-based one).
                    let work = |j: &Job| {
                        j.size.unwrap_or(0) * j.numjobs as u64
                            + j.runtime
                                .filter(|_| j.time_based)
                                .map_or(0, |r| r.as_secs())
                                * GIB
                    };
                    assert!(work(&q) < work(&f), "{p} is not smaller when quick");
                    // Same shape: quick changes only how much, not what.
                    assert_eq!(
                        (q.rw, q.bs, q.iodepth, q.direct, q.fdatasync),
                        (f.rw, f.bs, f.iodepth, f.direct, f.fdatasync),
                        "{p}"
                    );
                    // Bounded so a whole quick suite stays under a minute.
                    assert!(q.runtime.is_none_or(|r| r <= Duration::from_secs(5)), "{p}");
                    assert!(q.ramp_time <= Duration::from_secs(1), "{p}");
                }
                (Workload::SmallFiles { files: f, .. }, Workload::SmallFiles { files: q, .. }) => {
                    assert_eq!((f, q), (SMALL_FILES_DEFAULT, SMALL_FILES_QUICK));
                }
                other => panic!("{p}: {other:?}"),
            }
        }
        assert_eq!(job(Profile::Etcd, true).size, Some(4 * MIB));
        // QA: a quick etcd check on a slow disk had no cap on its run time.
        assert_eq!(job(Profile::Etcd, true).runtime, Some(QUICK_ETCD_CAP));
        assert_eq!(job(Profile::Etcd, false).runtime, None);
        assert_eq!(job(Profile::WriteThroughput, true).numjobs, 4);
    }
}
