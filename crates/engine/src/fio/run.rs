//! Running fio: the command through a [`CommandRunner`], a timeout from the job's runtime,
//! stopping on the stop flag (fio and its children), latency logs in a temporary directory,
//! and the JSON read into the same [`RunDoc`](crate::result::RunDoc) the native engine writes.

use super::cmdline::{command, files_to_make, job_files, path_problem};
use super::histogram::{read_series, sync_histogram};
use super::import::{parse, to_run_doc, DocContext, FioMeasured};
use super::{FioError, FIO};
use crate::job::Job;
use crate::result::TargetInfo;
use disktier_cmd::proctree;
use disktier_cmd::{CmdError, CommandRunner};
use rustix::process::Signal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The margin on top of a job's runtime, ramp and layout before fio is taken as hung.
const TIMEOUT_MARGIN: Duration = Duration::from_secs(120);

/// How long fio may run for `job` before it is killed: runtime and ramp, plus the time to lay
/// out its files at a slow 10 MiB/s, plus [`TIMEOUT_MARGIN`]. A size-based job (no runtime) gets
/// its I/O at 1 MiB/s, the floor at which a disk is unusable anyway, and at least an hour.
pub fn timeout_for(job: &Job) -> Duration {
    const MIB: u64 = 1 << 20;
    let bytes = job
        .size
        .unwrap_or(0)
        .saturating_mul(u64::from(job.numjobs.max(1)));
    let layout = Duration::from_secs(bytes / (10 * MIB));
    let io = match job.runtime {
        Some(r) => r,
        None => Duration::from_secs((bytes / MIB).max(3600)),
    };
    io.saturating_add(job.ramp_time)
        .saturating_add(layout)
        .saturating_add(TIMEOUT_MARGIN)
}

/// Options of a fio-engine run.
#[derive(Debug, Clone, Default)]
pub struct FioOptions {
    /// Keep the files fio created in a directory target.
    pub keep_files: bool,
    pub profile: Option<String>,
    pub quick: bool,
    /// Set when the run was stopped by a signal (fio stops on SIGINT too and prints what it has).
    pub stop: Option<std::sync::Arc<AtomicBool>>,
    /// `--no-layout`: a read job's short file is extended without data before fio starts, so
    /// that fio (which fills a file shorter than the job) leaves it as it is, like the native
    /// engine does.
    pub no_layout: bool,
    /// fio's absolute path, resolved once by the caller ([`disktier_cmd::which`]); `None` runs
    /// [`FIO`] as the runner finds it (the recording runner in tests).
    pub program: Option<PathBuf>,
    /// Kill fio after this long; `None`: [`timeout_for`] the job.
    pub timeout: Option<Duration>,
}

/// Runs `job` through fio and reads its JSON into a [`RunDoc`] with engine "fio". The target
/// must already have passed the engine's safety checks; `target` describes it.
pub fn run(
    job: &Job,
    runner: &dyn CommandRunner,
    target: TargetInfo,
    opts: &FioOptions,
) -> Result<FioMeasured, FioError> {
    if let Some(why) = path_problem(&job.target) {
        return Err(FioError::Path {
            path: job.target.clone(),
            why,
        });
    }
    let is_dir = target.kind == "directory";
    let created = files_to_make(job, is_dir);
    let mut warnings = Vec::new();
    if let (true, true, Some(size)) = (opts.no_layout, job.rw.reads(), job.size) {
        let files = if is_dir {
            job_files(job)
        } else {
            vec![job.target.clone()]
        };
        for p in files {
            if let Some(w) = extend_sparse(&p, job.offset + size)? {
                warnings.push(w);
            }
        }
    }
    // Per-second IOPS and bandwidth logs (fio's write_iops_log/write_bw_log averaged over
    // 1000 ms) and completion latency histograms (write_hist_log every 1000 ms) become the
    // document's `series`, as the native engine's one-second samples. fio logs no histogram
    // of fsync/fdatasync latency, so `sync_p99_ns` stays empty with fio.
    let logs = LogDir::new();
    let mut cmd = command(job, is_dir);
    if let Some(p) = &opts.program {
        cmd.program = p.display().to_string();
    }
    let limit = opts.timeout.unwrap_or_else(|| timeout_for(job));
    let comm = opts
        .program
        .as_deref()
        .and_then(|p| p.file_name())
        .map_or_else(|| FIO.to_string(), |n| n.to_string_lossy().into_owned());
    if let Some(l) = &logs {
        let prefix = l.prefix();
        cmd = cmd.args([
            format!("--write_iops_log={prefix}"),
            format!("--write_bw_log={prefix}"),
            "--log_avg_msec=1000".to_string(),
            format!("--write_hist_log={prefix}"),
            "--log_hist_msec=1000".to_string(),
        ]);
    }
    let out = output_watched(runner, &cmd, &comm, opts.stop.as_deref(), limit);
    if !opts.keep_files {
        for p in &created {
            let _ = std::fs::remove_file(p);
        }
    }
    let out = out?;
    let stopped = opts.stop.as_ref().is_some_and(|f| f.load(Ordering::SeqCst));
    // fio exits non-zero when a job errored; when a signal stopped it, it still prints what it
    // measured, which is the partial result we want.
    if !(out.success() || stopped && out.stdout.contains('{')) {
        return Err(FioError::Run(CmdError::Failed {
            cmd: cmd.to_string(),
            status: out.status,
            stdout: out.stdout,
            stderr: out.stderr,
        }));
    }
    let v = parse(&out.stdout, "fio's output")?;
    let mut doc = to_run_doc(
        &v,
        0,
        "fio's output",
        DocContext {
            job: Some(job.to_json()),
            target: Some(target),
            host: crate::host::detect(),
            profile: opts.profile.clone(),
            quick: opts.quick,
        },
    )?;
    doc.interrupted = stopped;
    if let Some(l) = &logs {
        doc.series = read_series(&l.prefix(), job.numjobs);
    }
    doc.warnings.extend(warnings);
    for line in out.stderr.lines().filter(|l| l.starts_with("fio:")) {
        doc.warnings.push(line.to_string());
    }
    Ok(FioMeasured {
        doc,
        sync_hist: sync_histogram(&v, 0),
    })
}

/// Runs fio's command `cmd` (`comm` is the program's name as `/proc` shows it) and returns
/// its output whatever its exit status; the one way disktier waits for fio, for a job and for a
/// job file.
///
/// A Ctrl-C on the terminal reaches fio too (same process group), but a SIGTERM sent to
/// disktier alone does not: a watcher passes the stop on to our own fio child as SIGINT, on
/// which fio stops and still prints what it measured. The same watcher kills fio and its job
/// processes (SIGKILL) when it runs past `limit`, so that a hung device cannot hang disktier
/// ([`FioError::Timeout`]). Both signals are sent from here, through pidfds ([`signal_fio`]):
/// no other program is looked up, and no pid reused meanwhile is hit.
pub fn output_watched(
    runner: &dyn CommandRunner,
    cmd: &disktier_cmd::Cmd,
    comm: &str,
    stop: Option<&AtomicBool>,
    limit: Duration,
) -> Result<disktier_cmd::Output, FioError> {
    let done = AtomicBool::new(false);
    let timed_out = AtomicBool::new(false);
    let out = std::thread::scope(|sc| {
        let (done, timed_out) = (&done, &timed_out);
        sc.spawn(move || {
            let start = std::time::Instant::now();
            let mut interrupted = false;
            while !done.load(Ordering::SeqCst) {
                if !interrupted && stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
                    interrupted = true;
                    signal_fio(comm, Signal::INT, false);
                }
                if start.elapsed() >= limit {
                    timed_out.store(true, Ordering::SeqCst);
                    // fio runs each job in a process of its own, which holds fio's output
                    // pipe open: kill the whole tree, children first.
                    signal_fio(comm, Signal::KILL, true);
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let out = runner.output(cmd);
        done.store(true, Ordering::SeqCst);
        out
    });
    if timed_out.load(Ordering::SeqCst) {
        return Err(FioError::Timeout { after: limit });
    }
    Ok(out?)
}

/// `--no-layout` for fio: makes the regular file at `path` (created when missing) `need` bytes
/// long without writing data. Returns the warning the native engine gives for such a file.
/// Block devices and files already long enough are left alone.
fn extend_sparse(path: &Path, need: u64) -> Result<Option<String>, FioError> {
    if need == 0 || std::fs::metadata(path).is_ok_and(|m| !m.is_file() || m.len() >= need) {
        return Ok(None);
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .and_then(|f| f.set_len(need))
        .map_err(|e| FioError::Layout {
            path: path.to_path_buf(),
            source: e,
        })?;
    Ok(Some(crate::layout::sparse_warning(path)))
}

/// Sends `sig` to this process's children named `comm` (fio), and first to every process
/// below them when `tree`. Each through a pidfd once `/proc` shows it is still the process the
/// scan saw, below the same parent ([`proctree`]): fio may exit (and the runner reap it) while
/// this runs, and its pid, or a job process's, go to a stranger.
fn signal_fio(comm: &str, sig: Signal, tree: bool) {
    let Some(me) = proctree::me() else {
        return;
    };
    let all = proctree::scan();
    for fio in all.iter().filter(|p| p.parent == me.pid && p.comm == comm) {
        if tree {
            proctree::signal_descendants(fio, sig);
        }
        let _ = proctree::signal_checked(fio, std::slice::from_ref(&me), sig);
    }
}

/// A private directory for fio's log files, removed when dropped.
struct LogDir(PathBuf);

impl LogDir {
    fn new() -> Option<LogDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("disktier-fio-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).ok().map(|_| LogDir(dir))
    }

    fn prefix(&self) -> String {
        self.0.join("log").display().to_string()
    }
}

impl Drop for LogDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
