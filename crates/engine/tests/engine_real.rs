//! The engine on real files, real loop devices and a real xfs (testkit), including each bad
//! input it must refuse. Sizes are a few MiB and runtimes a second or two.

use disktier_engine::*;
use disktier_testkit::loop_dev;
use disktier_testkit::{require, require_loop, LoopDev};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// Keeps every I/O record a run reports.
struct Log(Mutex<Vec<IoRecord>>);

impl IoLog for Log {
    fn record(&self, rec: IoRecord) {
        self.0.lock().unwrap().push(rec);
    }
}

fn job(target: &Path) -> Job {
    Job {
        target: target.to_path_buf(),
        name: "t".into(),
        ..Job::default()
    }
}

/// `--destructive`: may write over what the target holds.
fn destructive() -> RunOptions {
    RunOptions {
        destructive: true,
        ..RunOptions::default()
    }
}

/// `--keep-files`: the files a run creates stay.
fn keep_files() -> RunOptions {
    RunOptions {
        keep_files: true,
        ..RunOptions::default()
    }
}

/// A hash of every byte of the device (std's SipHash runs optimised even in a debug build,
/// unlike a byte loop in the test).
fn device_hash(dev: &LoopDev) -> u64 {
    use std::hash::Hasher;
    use std::io::Read;
    let mut f = std::fs::File::open(&dev.path).unwrap();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return h.finish();
        }
        h.write(&buf[..n]);
    }
}

fn mkfs_xfs(dev: &LoopDev) {
    let st = std::process::Command::new("mkfs.xfs")
        .args(["-q", "-f"])
        .arg(&dev.path)
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn etcd_quick_on_xfs_syncs_after_every_write() {
    if !require_loop() || !require(disktier_testkit::have("mkfs.xfs"), "mkfs.xfs") {
        return;
    }
    let dev = LoopDev::new(320 * MIB);
    let m = dev.mkfs_mount("xfs");
    let w = Profile::Etcd.workload(&m.dir, true);
    let opts = RunOptions {
        profile: Some("etcd".into()),
        quick: true,
        ..RunOptions::default()
    };
    let r = run_workload(&w, &opts).unwrap();
    let d = &r.doc;
    let write = d.results.write.as_ref().unwrap();
    let sync = d.results.sync.as_ref().unwrap();
    // 4 MiB at 2300 bytes: floor(4194304 / 2300) writes, each followed by fdatasync.
    assert_eq!(write.ios, 4 * MIB / 2300);
    assert_eq!(sync.ios, write.ios);
    assert_eq!(write.bytes, write.ios * 2300);
    assert!(d.results.read.is_none());
    let p99 = sync.lat_ns.p(99.0).unwrap();
    assert!(p99 >= sync.lat_ns.p(50.0).unwrap() && p99 <= sync.lat_ns.max);
    assert!(sync.lat_ns.min > 0 && sync.lat_ns.mean > 0.0);
    assert_eq!(d.target.fs_type.as_deref(), Some("xfs"));
    assert_eq!(d.target.device.as_deref(), Some(dev.name().as_str()));
    assert_eq!(d.job["ioengine"], "sync");
    assert_eq!(d.job["fdatasync"], 1);
    assert!(d.quick && d.profile.as_deref() == Some("etcd") && !d.interrupted);
    assert!(r.sync_hist.unwrap().len() == sync.ios);
    // Nothing left behind.
    assert_eq!(std::fs::read_dir(&m.dir).unwrap().count(), 0);
}

#[test]
fn randread_direct_on_a_loop_device() {
    let Some(dev) = loop_dev(16 * MIB) else {
        return;
    };
    let j = Job {
        rw: Rw::RandRead,
        bs: 4096,
        iodepth: 8,
        direct: true,
        runtime: Some(Duration::from_millis(1500)),
        time_based: true,
        ..job(&dev.path)
    };
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let s2 = seen.clone();
    let opts = RunOptions {
        progress: Some(Arc::new(move |p: &Progress| {
            s2.lock().unwrap().push(p.clone())
        })),
        ..RunOptions::default()
    };
    let r = run(&j, &opts).unwrap();
    let read = r.doc.results.read.as_ref().unwrap();
    assert!(read.ios > 100, "{}", read.ios);
    // About four progress reports a second, with live figures and a shrinking ETA.
    let seen = seen.lock().unwrap();
    assert!((4..=8).contains(&seen.len()), "{} reports", seen.len());
    assert!(seen.iter().all(|p| p.phase == "run" && p.eta.is_some()));
    assert!(seen.iter().any(|p| p.iops > 0.0 && p.bw_bytes > 0.0));
    assert!(seen.last().unwrap().eta < seen[0].eta);
    assert_eq!(read.bytes, read.ios * 4096);
    assert!((r.doc.duration_s - 1.5).abs() < 0.2, "{}", r.doc.duration_s);
    assert!((read.iops - read.ios as f64 / r.doc.duration_s).abs() < 1.0);
    assert_eq!(read.lat_ns.percentiles.len(), PERCENTILES.len());
    assert!(r.doc.results.write.is_none() && r.doc.results.sync.is_none());
    assert_eq!(r.doc.target.kind, "device");
    assert_eq!(r.doc.target.device.as_deref(), Some(dev.name().as_str()));
    assert!(r.doc.target.fs_type.is_none());
    assert!(r.doc.target.scheduler.is_some(), "{:?}", r.doc.target);
    // The whole device, resolved into the job.
    assert_eq!(r.doc.job["size"], 16 * MIB);
    let t = inspect(&dev.path).unwrap();
    assert_eq!(t, r.doc.target);
    assert!(!r.doc.series.is_empty());
    assert!(r.doc.series[0].read_iops > 0.0);
    assert!(r.doc.results.cpu.usr_s + r.doc.results.cpu.sys_s > 0.0);
    assert_eq!(r.doc.job["ioengine"], "io_uring");
}

#[test]
fn refuses_to_write_over_xfs_and_leaves_the_device_unchanged() {
    if !require_loop() || !require(disktier_testkit::have("mkfs.xfs"), "mkfs.xfs") {
        return;
    }
    let dev = LoopDev::new(300 * MIB);
    mkfs_xfs(&dev);
    let before = device_hash(&dev);
    let j = Job {
        rw: Rw::RandWrite,
        size: Some(4 * MIB),
        direct: true,
        ..job(&dev.path)
    };
    let e = run(&j, &RunOptions::default()).unwrap_err();
    assert!(matches!(e, EngineError::DeviceHasSignature { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains(&dev.path.display().to_string()) && msg.contains("xfs"),
        "{msg}"
    );
    assert!(msg.contains("--destructive"), "{msg}");
    assert_eq!(device_hash(&dev), before, "the device was modified");
    // Reads are allowed.
    let j = Job {
        rw: Rw::RandRead,
        size: Some(4 * MIB),
        ..job(&dev.path)
    };
    assert!(run(&j, &RunOptions::default()).is_ok());
    // Mounted: refused too (the signature is found first, the mount is named when wiped).
    let _m = disktier_testkit::Mount::new(&dev.path);
    let j = Job {
        rw: Rw::Write,
        size: Some(MIB),
        ..job(&dev.path)
    };
    assert!(run(&j, &RunOptions::default()).is_err());
    // Even --destructive cannot write to a mounted device: the exclusive open is refused.
    let opts = destructive();
    let e = run(&j, &opts).unwrap_err();
    assert!(matches!(e, EngineError::DeviceBusy { .. }), "{e}");
}

#[test]
fn writes_to_an_empty_device_and_with_destructive() {
    let Some(dev) = loop_dev(8 * MIB) else {
        return;
    };
    let j = Job {
        rw: Rw::Write,
        bs: 64 * 1024,
        iodepth: 4,
        direct: true,
        ..job(&dev.path)
    };
    let r = run(&j, &RunOptions::default()).unwrap();
    // No size: the whole device, once.
    assert_eq!(r.doc.results.write.as_ref().unwrap().bytes, 8 * MIB);
    // Now it holds data that looks like nothing known; an MBR-like signature is refused...
    let mut head = vec![0u8; 512];
    head[510] = 0x55;
    head[511] = 0xAA;
    head[446 + 4] = 0x83;
    std::fs::write(&dev.path, &head).unwrap();
    let e = run(&j, &RunOptions::default()).unwrap_err();
    assert!(matches!(e, EngineError::DeviceHasPartitions { .. }), "{e}");
    // ...unless destructive.
    let opts = destructive();
    if let Err(e) = run(&j, &opts) {
        panic!("destructive write failed: {e}");
    }
    // etcd's profile measures a filesystem, not a raw device (fio: --directory on a device).
    let opts = RunOptions {
        profile: Some("etcd".into()),
        destructive: true,
        ..RunOptions::default()
    };
    let e = run_workload(&Profile::Etcd.workload(&dev.path, true), &opts).unwrap_err();
    assert!(matches!(e, EngineError::WrongKind { .. }), "{e}");
    assert!(e.to_string().contains("directory"), "{e}");
}

#[test]
fn tmpfs_with_direct_is_refused_with_the_fix() {
    let shm = Path::new("/dev/shm");
    let is_tmpfs = inspect(shm).ok().and_then(|t| t.fs_type) == Some("tmpfs".into());
    if !require(is_tmpfs, "/dev/shm on tmpfs") {
        return;
    }
    let d = tempfile::tempdir_in(shm).unwrap();
    let j = Job {
        rw: Rw::RandRead,
        direct: true,
        size: Some(MIB),
        ..job(d.path())
    };
    let e = run(&j, &RunOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{} is on tmpfs, which has no O_DIRECT: pass --direct=false",
            d.path().display()
        )
    );
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    // Buffered is fine.
    let j = Job { direct: false, ..j };
    assert!(run(&j, &RunOptions::default()).is_ok());
}

#[test]
fn stop_flag_interrupts_within_a_second() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let j = Job {
        rw: Rw::RandRead,
        size: Some(4 * MIB),
        runtime: Some(Duration::from_secs(30)),
        time_based: true,
        ioengine: IoEngineKind::Psync,
        ..job(d.path())
    };
    let opts = RunOptions::default();
    let stop = opts.stop.clone();
    let t = Instant::now();
    let h = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        stop.store(true, Ordering::Relaxed);
        Instant::now()
    });
    let r = run(&j, &opts).unwrap();
    let stopped_at = h.join().unwrap();
    assert!(
        stopped_at.elapsed() < Duration::from_secs(1),
        "took {:?} to stop",
        stopped_at.elapsed()
    );
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(r.doc.interrupted);
    assert!(r.doc.results.read.as_ref().unwrap().ios > 0);
    assert!(
        r.doc.warnings.iter().any(|w| w.contains("page cache")),
        "{:?}",
        r.doc.warnings
    );
    assert!(r.doc.duration_s < 5.0);
    // The laid-out file was removed anyway.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn numjobs_in_a_directory_make_fio_named_files_kept_on_request() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let j = Job {
        name: "mix".into(),
        rw: Rw::RandRw,
        rwmixread: 50,
        numjobs: 3,
        iodepth: 4,
        size: Some(2 * MIB),
        ..job(d.path())
    };
    let opts = keep_files();
    let r = run(&j, &opts).unwrap();
    let (rd, wr) = (
        r.doc.results.read.as_ref().unwrap(),
        r.doc.results.write.as_ref().unwrap(),
    );
    // Each of 3 jobs does one pass of 512 blocks, split about evenly.
    assert_eq!(rd.ios + wr.ios, 3 * 512);
    assert!(rd.ios > 600 && wr.ios > 600, "{} {}", rd.ios, wr.ios);
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["mix.0.0", "mix.1.0", "mix.2.0"]);
    for n in &names {
        assert_eq!(std::fs::metadata(d.path().join(n)).unwrap().len(), 2 * MIB);
    }
    // Files that were there before are the user's: a write job refuses them without
    // --destructive (disktier keeps no marker of what it laid out), and leaves them as they were.
    let before = std::fs::read(d.path().join("mix.1.0")).unwrap();
    let e = run(&j, &RunOptions::default()).unwrap_err();
    assert!(matches!(e, EngineError::ExistingFile { .. }), "{e}");
    assert!(e.to_string().contains("--destructive"), "{e}");
    assert_eq!(std::fs::read(d.path().join("mix.1.0")).unwrap(), before);
    // Forced: reused, never removed.
    let forced = destructive();
    let r2 = run(&j, &forced).unwrap();
    assert!(r2.doc.results.read.is_some());
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 3);
}

/// Regression (#13): a write job overwrote an existing regular file without --destructive.
#[test]
fn existing_regular_file_is_never_written_unless_forced() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = d.path().join("precious");
    let data: Vec<u8> = (0..256 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    let w = Job {
        rw: Rw::RandWrite,
        size: Some(128 * 1024),
        ..job(&f)
    };
    for opts in [RunOptions::default(), keep_files()] {
        let e = run(&w, &opts).unwrap_err();
        assert!(matches!(e, EngineError::ExistingFile { .. }), "{e}");
        let e = disktier_engine::preflight(&w, &opts).unwrap_err();
        assert!(matches!(e, EngineError::ExistingFile { .. }), "{e}");
    }
    assert_eq!(std::fs::read(&f).unwrap(), data, "untouched");
    // A read job within the file only reads: allowed, and the file stays.
    let r = Job {
        rw: Rw::RandRead,
        size: Some(128 * 1024),
        ..job(&f)
    };
    run(&r, &RunOptions::default()).unwrap();
    assert_eq!(std::fs::read(&f).unwrap(), data, "a read changes nothing");
    // A read job that would have to grow the file (layout) is a write too.
    let grow = Job {
        size: Some(1024 * 1024),
        ..r.clone()
    };
    let e = run(&grow, &RunOptions::default()).unwrap_err();
    assert!(matches!(e, EngineError::ExistingFile { .. }), "{e}");
    assert_eq!(std::fs::metadata(&f).unwrap().len(), data.len() as u64);
    // Forced: written, and not removed (it was not disktier's).
    let forced = destructive();
    run(&w, &forced).unwrap();
    assert!(f.exists());
    assert_ne!(std::fs::read(&f).unwrap(), data);
}

/// A symlink planted where disktier creates its per-job file is never followed.
#[test]
fn planted_symlink_for_a_new_file_is_refused() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, b"keep").unwrap();
    std::os::unix::fs::symlink(&victim, d.path().join("j.0.0")).unwrap();
    let w = Job {
        name: "j".into(),
        rw: Rw::Write,
        size: Some(64 * 1024),
        ..job(d.path())
    };
    let e = run(&w, &RunOptions::default()).unwrap_err();
    assert!(matches!(e, EngineError::ExistingFile { .. }), "{e}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    assert!(d
        .path()
        .join("j.0.0")
        .symlink_metadata()
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn every_engine_runs_a_buffered_odd_block_size() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    for e in [
        IoEngineKind::IoUring,
        IoEngineKind::Psync,
        IoEngineKind::Sync,
    ] {
        let j = Job {
            rw: Rw::Write,
            bs: 2300,
            size: Some(MIB),
            ioengine: e,
            fsync: 16,
            iodepth: 4,
            ..job(&d.path().join(format!("f-{e}")))
        };
        let r = run(&j, &RunOptions::default()).unwrap();
        let w = r.doc.results.write.as_ref().unwrap();
        assert_eq!(w.ios, MIB / 2300, "{e}");
        assert_eq!(r.doc.results.sync.as_ref().unwrap().ios, w.ios / 16, "{e}");
        assert_eq!(r.doc.job["ioengine"], e.name());
    }
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn io_log_sees_every_io() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let log = Arc::new(Log(Mutex::new(Vec::new())));
    let j = Job {
        rw: Rw::Write,
        bs: 4096,
        size: Some(256 * 1024),
        fdatasync: 8,
        iodepth: 4,
        ..job(&d.path().join("f"))
    };
    let opts = RunOptions {
        io_log: Some(log.clone()),
        ..RunOptions::default()
    };
    run(&j, &opts).unwrap();
    let recs = log.0.lock().unwrap();
    let writes: Vec<_> = recs.iter().filter(|r| r.op == IoOp::Write).collect();
    assert_eq!(writes.len(), 64);
    assert_eq!(recs.iter().filter(|r| r.op == IoOp::Sync).count(), 8);
    let mut offs: Vec<u64> = writes.iter().map(|r| r.offset).collect();
    offs.sort();
    assert_eq!(offs, (0..64).map(|i| i * 4096).collect::<Vec<_>>());
    assert!(writes.iter().all(|r| r.len == 4096 && r.latency_ns > 0));
}

#[test]
fn small_files_counts_and_cleans_up() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let w = Workload::SmallFiles {
        dir: d.path().to_path_buf(),
        files: 40,
        file_size: 64 * 1024,
    };
    let r = run_workload(&w, &RunOptions::default()).unwrap();
    let s = r.doc.results.small_files.as_ref().unwrap();
    assert_eq!(s.files, 40);
    assert!(s.files_per_s > 0.0 && s.seconds > 0.0);
    assert!((s.bw_bytes - s.files_per_s * 65536.0).abs() < 1.0);
    assert_eq!(r.doc.results.write.as_ref().unwrap().ios, 40);
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    // The removal is a phase of its own on the progress line, said before it starts (10^7
    // files take minutes), and the files are gone after it.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (s2, dir) = (seen.clone(), d.path().to_path_buf());
    let opts = RunOptions {
        progress: Some(std::sync::Arc::new(move |p: &Progress| {
            if p.phase == "cleanup" {
                let sub = std::fs::read_dir(&dir)
                    .unwrap()
                    .next()
                    .map(|e| e.unwrap().path());
                let left = sub.map_or(0, |s| std::fs::read_dir(s).unwrap().count());
                s2.lock().unwrap().push(left);
            }
        })),
        ..RunOptions::default()
    };
    run_workload(&w, &opts).unwrap();
    assert_eq!(seen.lock().unwrap().first(), Some(&40), "{seen:?}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    // A file is not a directory.
    let f = d.path().join("x");
    std::fs::write(&f, b"x").unwrap();
    let w = Workload::SmallFiles {
        dir: f,
        files: 1,
        file_size: 1,
    };
    let e = run_workload(&w, &RunOptions::default()).unwrap_err();
    assert!(matches!(e, EngineError::WrongKind { .. }), "{e}");
}

/// Directories earlier runs left (a kill, or a second Ctrl-C during the cleanup) are named by
/// the next run, in its warnings and in a refusal for room; they are not removed, and a
/// leftover with this process's own id does not stop the run.
#[test]
fn small_files_names_directories_earlier_runs_left() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let name = |pid: String| d.path().join(format!("disktier-small-files.{pid}"));
    // pid_max is at most 2^22, so no process has this id; pid 1 is not disktier; this test's
    // own id is not a disktier run either (its directory would be made after the scan).
    let gone = [
        name("4194304".into()),
        name("1".into()),
        name(std::process::id().to_string()),
        name(format!("{}-3", 4194304)),
    ];
    for g in &gone {
        std::fs::create_dir(g).unwrap();
        std::fs::write(g.join("f0"), b"x").unwrap();
    }
    std::fs::write(name("4194305".into()), b"a file, not a run's directory").unwrap();
    std::fs::create_dir(d.path().join("disktier-small-files.x")).unwrap();
    let w = Workload::SmallFiles {
        dir: d.path().to_path_buf(),
        files: 3,
        file_size: 4096,
    };
    let r = run_workload(&w, &RunOptions::default()).unwrap();
    let warned = r.doc.warnings.join("\n");
    for g in &gone {
        assert!(
            warned.contains(&format!(
                "{} holds the files of an earlier small-files run",
                g.display()
            )),
            "{warned}"
        );
        assert!(g.join("f0").exists(), "{}", g.display());
    }
    assert_eq!(r.doc.warnings.len(), gone.len(), "{warned}");
    assert_eq!(r.doc.results.small_files.as_ref().unwrap().files, 3);
    // Its own directory (with a suffix, as its id was taken) is gone again.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), gone.len() + 2);
    let huge = Workload::SmallFiles {
        dir: d.path().to_path_buf(),
        files: 1 << 40,
        file_size: 1 << 20,
    };
    let e = run_workload(&huge, &RunOptions::default()).unwrap_err();
    assert!(matches!(e, EngineError::NoSpace { .. }), "{e}");
    assert!(
        e.to_string().contains(&format!(
            "{} holds an earlier run's files: remove it",
            gone[0].display()
        )),
        "{e}"
    );
}

#[test]
fn bad_targets_get_one_line_errors() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let cases: Vec<(Job, &str)> = vec![
        (
            Job {
                size: Some(MIB),
                ..job(&d.path().join("no/such/file"))
            },
            "does not exist",
        ),
        (job(&d.path().join("new-file")), "--size"),
        (job(d.path()), "--size"),
        (
            Job {
                size: Some(1 << 50),
                rw: Rw::Write,
                ..job(d.path())
            },
            "free",
        ),
    ];
    for (j, want) in cases {
        let e = run(&j, &RunOptions::default()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(want), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn io_uring_writes_land_where_planned() {
    // Sequential writes at iodepth 8 into a fresh (fallocated, so zero-reading) file: every
    // block must end up written, and with non-zero data.
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let f = d.path().join("w");
    let j = Job {
        rw: Rw::Write,
        bs: 4096,
        iodepth: 8,
        size: Some(MIB),
        ..job(&f)
    };
    let opts = keep_files();
    let r = run(&j, &opts).unwrap();
    assert_eq!(r.doc.results.write.as_ref().unwrap().ios, 256);
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data.len() as u64, MIB);
    for (i, block) in data.chunks(4096).enumerate() {
        assert!(block.iter().any(|b| *b != 0), "block {i} was not written");
    }
}

#[test]
fn stopped_during_layout_gives_an_empty_interrupted_result() {
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let j = Job {
        rw: Rw::Read,
        size: Some(64 * MIB),
        ..job(d.path())
    };
    let opts = RunOptions::default();
    opts.stop.store(true, Ordering::Relaxed);
    let r = run(&j, &opts).unwrap();
    assert!(r.doc.interrupted);
    assert_eq!(r.doc.results.read.as_ref().unwrap().ios, 0);
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn every_submission_batch_size_writes_each_random_block_once() {
    // fio's iodepth_batch_submit: 1 (the default), a few, iodepth, 0 (= iodepth) and more than
    // iodepth. With fio's random map, a size-based randwrite writes every block exactly once,
    // whatever the batching; the io_uring loop must neither lose nor repeat a slot.
    for batch in [1u32, 3, 8, 0, 64] {
        let d = tempfile::tempdir_in("/var/tmp").unwrap();
        let f = d.path().join("w");
        let log = Arc::new(Log(Mutex::new(Vec::new())));
        let j = Job {
            rw: Rw::RandWrite,
            bs: 4096,
            iodepth: 8,
            iodepth_batch_submit: batch,
            size: Some(MIB),
            ..job(&f)
        };
        let opts = RunOptions {
            keep_files: true,
            io_log: Some(log.clone()),
            ..RunOptions::default()
        };
        let r = run(&j, &opts).unwrap();
        assert_eq!(
            r.doc.results.write.as_ref().unwrap().ios,
            256,
            "batch {batch}"
        );
        let mut offs: Vec<u64> = log.0.lock().unwrap().iter().map(|r| r.offset).collect();
        offs.sort_unstable();
        assert_eq!(
            offs,
            (0..256).map(|i| i * 4096).collect::<Vec<_>>(),
            "batch {batch}"
        );
        let data = std::fs::read(&f).unwrap();
        for (i, block) in data.chunks(4096).enumerate() {
            assert!(
                block.iter().any(|b| *b != 0),
                "batch {batch}: block {i} not written"
            );
        }
    }
}

#[test]
fn cpus_allowed_keeps_every_job_thread_on_its_cpus() {
    // fio's cpus_allowed: each I/O is logged from the job thread, which must be on the CPU
    // named (the machine's last one, so that it differs from the default on most runs).
    struct Cpus(Mutex<Vec<usize>>);
    impl IoLog for Cpus {
        fn record(&self, _rec: IoRecord) {
            self.0.lock().unwrap().push(rustix::thread::sched_getcpu());
        }
    }
    let last = std::thread::available_parallelism().unwrap().get() - 1;
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let log = Arc::new(Cpus(Mutex::new(Vec::new())));
    let j = Job {
        rw: Rw::RandRead,
        bs: 4096,
        numjobs: 2,
        size: Some(MIB),
        cpus_allowed: last.to_string(),
        ..job(d.path())
    };
    let opts = RunOptions {
        io_log: Some(log.clone()),
        ..RunOptions::default()
    };
    run(&j, &opts).unwrap();
    let cpus = log.0.lock().unwrap();
    assert_eq!(cpus.len(), 512, "two jobs of 256 reads");
    assert!(cpus.iter().all(|c| *c == last), "{cpus:?}");

    // A CPU the machine does not have: the job fails with the option named, nothing hangs.
    let j = Job {
        cpus_allowed: "1000".into(),
        ..j
    };
    let e = run(&j, &RunOptions::default()).unwrap_err().to_string();
    assert!(e.contains("cpus_allowed") && e.contains("online"), "{e}");
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "files removed"
    );
}

/// Writes to `dir/filler` until the filesystem is full (the first I/O of the job triggers it).
struct FillOnFirstIo {
    dir: std::path::PathBuf,
    done: std::sync::Once,
}

impl IoLog for FillOnFirstIo {
    fn record(&self, _rec: IoRecord) {
        self.done.call_once(|| {
            use std::io::Write;
            let mut f = std::fs::File::create(self.dir.join("filler")).unwrap();
            let chunk = vec![7u8; 64 * 1024];
            while f.write_all(&chunk).is_ok() {}
        });
    }
}

/// Fault (#13): the filesystem fills up while the job writes: a DiskFull error that says so,
/// and the file the run created is removed. A real 8 MiB tmpfs, mounted and unmounted here.
#[test]
fn disk_full_during_a_write_job_is_a_clear_error_and_leaves_nothing() {
    if !require(disktier_testkit::is_root(), "root (mount a tmpfs)") {
        return;
    }
    let m = disktier_testkit::Mount::tmpfs(8 * MIB);
    let target = m.dir.join("bench.dat");
    let j = Job {
        rw: Rw::Write,
        bs: 64 * 1024,
        size: Some(6 * MIB),
        ioengine: IoEngineKind::Psync,
        ..job(&target)
    };
    let opts = RunOptions {
        layout: false,
        io_log: Some(Arc::new(FillOnFirstIo {
            dir: m.dir.clone(),
            done: std::sync::Once::new(),
        })),
        ..RunOptions::default()
    };
    let e = run(&j, &opts).unwrap_err();
    assert!(matches!(e, EngineError::DiskFull { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("filesystem is full") && msg.contains("removed"),
        "{msg}"
    );
    assert!(!target.exists(), "the partial file was removed");
    assert!(
        m.dir.join("filler").exists(),
        "what was not disktier's stays"
    );
}

/// QA: `bench --rw read --size 1m FILE` on a filesystem mounted read-only, FILE 2 MiB, said "is
/// on a read-only filesystem: this job would write it" (the lay-out step opened every file
/// read-write). A read job within existing data runs, with or without lay-out, sequential or
/// random, on a file or a directory's per-job file; a write, or a read that must create or grow
/// a file, is refused before any I/O.
#[test]
fn reads_existing_data_on_a_read_only_filesystem() {
    let Some(m) = disktier_testkit::Mount::tmpfs_if_root(16 * MIB) else {
        return;
    };
    let f = m.dir.join("f");
    let data: Vec<u8> = (0..2 * MIB as u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    // The per-job file a directory target's job `t` reads (fio's name: t.0.0).
    std::fs::write(m.dir.join("t.0.0"), &data).unwrap();
    m.remount("ro");
    let read = |target: &Path, rw: Rw, size: u64| Job {
        rw,
        size: Some(size),
        runtime: Some(Duration::from_millis(200)),
        time_based: true,
        // io_uring lets go of its files after the run returns, which keeps the mount busy when
        // the test unmounts it; the command-line test (engine_cli.rs) runs io_uring.
        ioengine: IoEngineKind::Psync,
        ..job(target)
    };
    let no_layout = RunOptions {
        layout: false,
        ..RunOptions::default()
    };
    for (j, opts) in [
        (read(&f, Rw::Read, MIB), RunOptions::default()),
        (read(&f, Rw::Read, MIB), no_layout.clone()),
        (read(&f, Rw::RandRead, MIB), RunOptions::default()),
        (read(&f, Rw::Read, 2 * MIB), RunOptions::default()),
        (read(&m.dir, Rw::RandRead, MIB), RunOptions::default()),
    ] {
        disktier_engine::preflight(&j, &opts).unwrap();
        let r = run(&j, &opts).unwrap_or_else(|e| panic!("{:?} {}: {e}", j.rw, j.target.display()));
        assert!(r.doc.results.read.as_ref().unwrap().ios > 0);
    }
    let write = Job {
        rw: Rw::Write,
        ..read(&f, Rw::Read, MIB)
    };
    let grow = read(&f, Rw::Read, 4 * MIB);
    let new_file = read(&m.dir.join("new"), Rw::Read, MIB);
    let other_name = Job {
        name: "u".into(),
        ..read(&m.dir, Rw::Read, MIB)
    };
    for j in [write, grow, new_file, other_name] {
        for opts in [RunOptions::default(), destructive()] {
            let e = run(&j, &opts).unwrap_err();
            assert!(
                matches!(e, EngineError::ReadOnlyFs { .. }),
                "{:?} {} {}: {e}",
                j.rw,
                j.target.display(),
                j.size.unwrap()
            );
        }
    }
    m.remount("rw");
    assert_eq!(std::fs::read(&f).unwrap(), data, "nothing was written");
}
