//! The instance-store performance recipe's small-file test: create N files of 1 MiB each with
//! write()+close, the way `for i in ...; do dd if=/dev/zero of=f$i bs=1M count=1; done` does (but
//! with non-zero data), timed from the first create to the end of one `syncfs` of the
//! filesystem after the last close, as fio's `end_fsync` ends a job: without it, a run whose
//! files fit in the page cache times memory copies, not the disk (QA: 8,076 MiB/s on a loop
//! device). Each file's create+write+close time is recorded as a write latency; the files go
//! into a fresh subdirectory that is removed afterwards (unless keep_files).

use crate::advice;
use crate::advice::{OptionName::Nrfiles, Pass};
use crate::error::EngineError;
use crate::plan::{now_ns, Rng};
use crate::result::{Cpu, Results, RunDoc, SmallFiles, SCHEMA_VERSION};
use crate::run::{build_series, now_rfc3339};
use crate::stats::{DirAcc, SecRecord};
use crate::target::{self, Kind};
use crate::types::{Created, Measured, Progress, RunOptions};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

const SEC: u64 = 1_000_000_000;
/// Largest file: each is written from one buffer held in memory (the engine's largest bs).
pub const MAX_FILE_SIZE: u64 = 256 << 20;

pub fn run(
    dir: &Path,
    files: u64,
    file_size: u64,
    opts: &RunOptions,
) -> Result<Measured, EngineError> {
    let started_at = now_rfc3339();
    if files == 0 || file_size == 0 {
        return Err(EngineError::BadOption {
            option: "nrfiles",
            value: format!("{files} x {file_size}"),
            fix: "create at least one file of at least one byte".into(),
        });
    }
    if file_size > MAX_FILE_SIZE {
        return Err(EngineError::BadOption {
            option: "size",
            value: format!("{} per file", disktier_units::Bytes(file_size)),
            fix: advice![
                "each file is written from one buffer: keep a file at 256 MiB or less (more ",
                Nrfiles,
                ")"
            ],
        });
    }
    let c = target::classify(dir)?;
    // QA: `bench ~/ebs-data --profile small-files` before `mkdir ~/ebs-data` (the instance-store
    // recipe [recipe-instance-store-perf] makes the directory first) said "~/ebs-data is a file":
    // a path that does not exist is a file to create for other jobs, never for this one.
    if c.kind == Kind::NewFile {
        return Err(EngineError::MissingDirectory {
            path: dir.into(),
            wanted: "the small-files profile creates its files in a directory",
        });
    }
    if c.kind != Kind::Directory {
        return Err(EngineError::WrongKind {
            path: dir.into(),
            is: if c.kind == Kind::Device {
                "block device"
            } else {
                "file"
            },
            wanted: "the small-files profile creates files in a directory".into(),
            fix: "pass a directory (e.g. the mount point of the filesystem to test)".into(),
        });
    }
    c.check_writable(dir)?;
    let left = leftovers(dir);
    c.check_room(dir, files.saturating_mul(file_size), |free| {
        let fit = free / file_size;
        let left = left
            .iter()
            .map(|d| format!("; {} holds an earlier run's files: remove it", d.display()))
            .collect::<String>();
        // --quick only where its file count fits and it was not given already.
        let quick = !opts.quick && crate::profile::SMALL_FILES_QUICK.saturating_mul(file_size) <= free;
        if fit == 0 {
            format!("free some space or pick a directory on another filesystem{left}").into()
        } else {
            advice![
                Pass,
                " ",
                Nrfiles.with(fit),
                format!(
                    " or fewer ({fit} files of {} fit){}, or pick a directory on another filesystem{left}",
                    disktier_units::Bytes(file_size),
                    if quick { ", or --quick" } else { "" }
                )
            ]
        }
    })?;
    let sub = make_run_dir(dir)?;
    let created = Created {
        paths: vec![sub.clone()],
        keep: opts.keep_files,
    };

    let mut buf = vec![0u8; file_size as usize];
    Rng::new(file_size).fill(&mut buf);
    let mut acc = DirAcc::default();
    let mut secs: BTreeMap<u64, SecRecord> = BTreeMap::new();
    let mut cur = SecRecord::new(0);
    let cpu0 = crate::uring::sys::cpu_times();
    let t0 = now_ns();
    let mut next_report = t0 + SEC / 4;
    let mut last = (0u64, t0);
    let mut end = t0;
    let mut interrupted = false;
    for i in 0..files {
        if opts.stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let p = sub.join(format!("f{i}"));
        let s = now_ns();
        let mut f =
            std::fs::File::create(&p).map_err(|e| EngineError::from_open(&p, "write", e))?;
        f.write_all(&buf).map_err(|e| EngineError::Io {
            path: p.clone(),
            op: "write",
            source: e,
        })?;
        drop(f);
        end = now_ns();
        let lat = end - s;
        acc.record(lat, file_size);
        let sec = (end - t0) / SEC;
        if sec != cur.sec {
            let done = std::mem::replace(&mut cur, SecRecord::new(sec));
            secs.insert(done.sec, done);
        }
        cur.write_ios += 1;
        cur.write_bytes += file_size;
        crate::stats::record_ns(&mut cur.lat, lat);
        if end >= next_report {
            next_report = end + SEC / 4;
            if let Some(cb) = &opts.progress {
                let dt = (end - last.1) as f64 / 1e9;
                let done = i + 1;
                let rate = (done - last.0) as f64 / dt;
                cb(&Progress {
                    elapsed: Duration::from_nanos(end - t0),
                    eta: (rate > 0.0)
                        .then(|| Duration::from_secs_f64((files - done) as f64 / rate)),
                    iops: rate,
                    bw_bytes: rate * file_size as f64,
                    p99_ns: Some(acc.hist.value_at_quantile(0.99)),
                    phase: "run",
                });
                last = (done, end);
            }
        }
    }
    // The final sync: the run ends when the files are on the disk. A stopped run skips it.
    let sync_s = if interrupted {
        None
    } else {
        let s = now_ns();
        let d = std::fs::File::open(&sub).map_err(|e| EngineError::from_open(&sub, "read", e))?;
        match final_sync(d, &opts.stop) {
            Some(Ok(())) => {
                end = now_ns();
                Some((end - s) as f64 / 1e9)
            }
            Some(Err(e)) => {
                return Err(EngineError::Io {
                    path: sub.clone(),
                    op: "syncfs",
                    source: e,
                })
            }
            // Stopped during the sync (QA: a Ctrl-C there was ignored and the run saved as
            // complete): the run is interrupted, its time ends at the last close.
            None => {
                interrupted = true;
                None
            }
        }
    };
    if !cur.is_empty() {
        secs.insert(cur.sec, cur);
    }
    let cpu1 = crate::uring::sys::cpu_times();
    let secs_f = (end - t0) as f64 / 1e9;
    let per_s = |v: f64| if secs_f > 0.0 { v / secs_f } else { 0.0 };
    let small = SmallFiles {
        files: acc.ios,
        file_size,
        seconds: secs_f,
        files_per_s: per_s(acc.ios as f64),
        bw_bytes: per_s(acc.bytes as f64),
        sync_s,
    };
    let job = serde_json::json!({
        "name": "small_files",
        "target": dir,
        "files": files,
        "file_size": file_size,
        "rw": "write",
        "bs": file_size,
    });
    let doc = RunDoc {
        schema_version: SCHEMA_VERSION,
        engine: "disktier".into(),
        profile: opts.profile.clone(),
        quick: opts.quick,
        job,
        target: c.info.clone(),
        host: crate::host::detect(),
        started_at,
        duration_s: secs_f,
        interrupted,
        results: Results {
            write: Some(acc.dir_stats(secs_f)),
            cpu: Cpu {
                usr_s: cpu1.0 - cpu0.0,
                sys_s: cpu1.1 - cpu0.1,
            },
            small_files: Some(small),
            ..Results::default()
        },
        series: build_series(&secs, secs_f),
        verdicts: Vec::new(),
        warnings: left.iter().map(|d| leftover_warning(d)).collect(),
    };
    if !opts.keep_files {
        remove_files(&sub, acc.ios, file_size, opts);
    }
    drop(created);
    Ok(Measured {
        doc,
        read_hist: None,
        write_hist: Some(acc.hist),
        sync_hist: None,
    })
}

/// The start of the name of a run's directory; the process id follows.
const RUN_DIR: &str = "disktier-small-files.";
/// Most entries of the target directory looked at for earlier runs' directories.
const SCAN_ENTRIES: usize = 100_000;
/// Most earlier runs' directories named.
const MAX_LEFTOVERS: usize = 8;

/// Makes the run's directory, `disktier-small-files.PID`, or `.PID-N` where an earlier process
/// with this id left one.
fn make_run_dir(dir: &Path) -> Result<PathBuf, EngineError> {
    let pid = std::process::id();
    let mut n = 0u32;
    loop {
        let name = match n {
            0 => format!("{RUN_DIR}{pid}"),
            n => format!("{RUN_DIR}{pid}-{n}"),
        };
        let sub = dir.join(name);
        match std::fs::create_dir(&sub) {
            Ok(()) => return Ok(sub),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 64 => n += 1,
            Err(e) => return Err(EngineError::from_open(&sub, "write", e)),
        }
    }
}

/// The directories earlier small-files runs left in `dir`: named `disktier-small-files.PID`
/// (or `.PID-N`) where no disktier process PID runs (a run killed, or stopped by a second Ctrl-C during its
/// cleanup, keeps its files, as --keep-files does). They take the space a run needs, so the next run names them.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .take(SCAN_ENTRIES)
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let pid = name.to_str().and_then(|n| n.strip_prefix(RUN_DIR));
            pid.and_then(|p| p.split('-').next()?.parse::<u32>().ok())
                .is_some_and(|pid| !disktier_runs(pid))
                && e.file_type().is_ok_and(|t| t.is_dir())
        })
        .map(|e| e.path())
        .take(MAX_LEFTOVERS)
        .collect();
    out.sort();
    out
}

/// Whether process `pid` is a running disktier (another small-files run in the same
/// directory), read from `/proc/PID/comm`. This process has not made its directory yet, so a
/// directory with its own id is an earlier one's.
fn disktier_runs(pid: u32) -> bool {
    pid != std::process::id()
        && std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|c| c.trim_end().starts_with("disktier"))
}

fn leftover_warning(d: &Path) -> String {
    format!(
        "{} holds the files of an earlier small-files run whose process is gone (stopped before it removed them, or run with --keep-files): they take room on this filesystem; remove it (rm -r) unless they are kept on purpose",
        d.display()
    )
}

/// Removes the run's `count` files (`f0`..) and their directory, reporting a "cleanup" phase with
/// its rate and time left: 10^7 files take minutes (QA: 415 s after a Ctrl-C with nothing on
/// the screen, where a second Ctrl-C would have left them all). Whatever is left (a name that
/// was not removed) goes with the directory when [`Created`] is dropped.
fn remove_files(sub: &Path, count: u64, file_size: u64, opts: &RunOptions) {
    let t0 = now_ns();
    let mut next_report = t0 + SEC / 4;
    let mut last = (0u64, t0);
    let mut name = String::new();
    if let Some(cb) = &opts.progress {
        // At once: the line then says what the wait is for.
        cb(&Progress {
            elapsed: Duration::ZERO,
            eta: None,
            iops: 0.0,
            bw_bytes: 0.0,
            p99_ns: None,
            phase: "cleanup",
        });
    }
    for i in 0..count {
        use std::fmt::Write as _;
        name.clear();
        let _ = write!(name, "f{i}");
        let _ = std::fs::remove_file(sub.join(&name));
        let Some(cb) = &opts.progress else { continue };
        let now = now_ns();
        if now >= next_report {
            next_report = now + SEC / 4;
            let done = i + 1;
            let rate = (done - last.0) as f64 / ((now - last.1) as f64 / 1e9);
            cb(&Progress {
                elapsed: Duration::from_nanos(now - t0),
                eta: (rate > 0.0).then(|| Duration::from_secs_f64((count - done) as f64 / rate)),
                iops: rate,
                bw_bytes: rate * file_size as f64,
                p99_ns: None,
                phase: "cleanup",
            });
            last = (done, now);
        }
    }
    let _ = std::fs::remove_dir(sub);
}

/// `syncfs` on the filesystem of `dir`, on a thread of its own so that a stop is seen within
/// [`STOP_POLL`] however long the page cache takes to drain (a slow cloud volume): `None` when
/// `stop` came first. The sync then goes on in its thread: the result is reported at once, and
/// only the process's exit waits for the system call to return.
fn final_sync(
    dir: std::fs::File,
    stop: &std::sync::atomic::AtomicBool,
) -> Option<std::io::Result<()>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(rustix::fs::syncfs(&dir).map_err(std::io::Error::from));
    });
    loop {
        match rx.recv_timeout(STOP_POLL) {
            Ok(r) => return Some(r),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if stop.load(Ordering::Relaxed) {
                    return None;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Some(Err(std::io::Error::other(
                    "the sync thread ended without an answer",
                )))
            }
        }
    }
}

/// How often the final sync's wait looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(100);
