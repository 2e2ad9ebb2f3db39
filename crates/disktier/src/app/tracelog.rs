//! The engine's I/O log as a DTTRACE file: what `bench --trace` and `trace record` write. It
//! joins two libraries (the engine's `IoLog` and the cache simulator's trace writer), so it lives
//! in the application rather than in either.

use anyhow::Context;
use disktier_cachesim::trace::{Header, Record, Writer, FLAG_LATENCY, MAGIC};
use disktier_cachesim::Op;
use disktier_engine::{IoLog, IoOp, IoRecord};
use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The engine's I/O log writing a DTTRACE file. Records arrive from every worker thread; a
/// mutex around a buffered writer is cheap next to the I/O itself. The trailer is written by
/// [`TraceLog::finish`] or, failing that, when the log is dropped.
pub struct TraceLog {
    path: PathBuf,
    /// The device and inode of the regular file this log made or replaced at `path`, removed
    /// when the run fails (and only while `path` still names that file); None for a pipe or the
    /// null device, which are only written to.
    owned: Option<FileId>,
    inner: Mutex<LogState>,
    /// Mark writes REQ_SYNC: O_DIRECT writes reach the block layer with REQ_SYNC | REQ_IDLE
    /// (fs/iomap/direct-io.c), which moves bcache's writeback cutoff from 40 % to 70 %.
    sync_writes: bool,
}

/// A file's (device, inode): which file a path names at one moment.
type FileId = (u64, u64);

struct LogState {
    writer: Option<Writer<BufWriter<File>>>,
    error: Option<String>,
    /// Each stream's lowest offset and furthest end of a read or write: what the run can have
    /// touched, which bounds the cache sizes worth simulating ([`TraceLog::span`]).
    extents: HashMap<u32, (u64, u64)>,
}

impl TraceLog {
    pub fn create(path: &Path) -> anyhow::Result<TraceLog> {
        Self::create_with(path, false)
    }

    /// A log whose writes are flagged REQ_SYNC (for jobs with `direct`).
    pub fn create_with(path: &Path, sync_writes: bool) -> anyhow::Result<TraceLog> {
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let header = Header::new("disktier-engine", start, FLAG_LATENCY);
        let (file, owned) = open_output(path)?;
        let w =
            Writer::new(BufWriter::with_capacity(1 << 16, file), &header).with_context(|| {
                format!(
                    "cannot write the trace to {}: pick a writable path",
                    path.display()
                )
            })?;
        Ok(TraceLog {
            path: path.to_path_buf(),
            owned,
            inner: Mutex::new(LogState {
                writer: Some(w),
                error: None,
                extents: HashMap::new(),
            }),
            sync_writes,
        })
    }

    /// Writes the trailer; returns the number of records. When writing failed (the filesystem
    /// filled up, say) the partial trace is removed and the error says why.
    pub fn finish(&self) -> anyhow::Result<u64> {
        let mut st = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let stored = st.error.take();
        let w = st.writer.take();
        let res = match (stored, w) {
            (Some(e), _) => Err(e),
            (None, None) => return Ok(0),
            (None, Some(w)) => {
                let n = w.count();
                w.finish().map(|_| n).map_err(|e| e.to_string())
            }
        };
        res.map_err(|e| {
            self.remove();
            let full = e.contains("No space left") || e.contains("quota exceeded");
            anyhow::anyhow!(
                "writing the trace {} failed ({e}){}{}",
                self.path.display(),
                if full && self.owned.is_some() {
                    ": its filesystem is full, free space or write the trace (-o) elsewhere"
                } else {
                    ""
                },
                if self.owned.is_some() {
                    "; the partial trace was removed"
                } else {
                    ""
                }
            )
        })
    }

    /// The bytes the recorded reads and writes span, each stream from its lowest offset to its
    /// furthest end, added up: a bound on the trace's footprint that a time-based run, which
    /// moves its region many times over, does not pass.
    pub fn span(&self) -> u64 {
        let st = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        st.extents
            .values()
            .fold(0u64, |n, &(lo, hi)| n.saturating_add(hi - lo))
    }

    /// Drops a trace whose run failed: no partial file is left behind.
    pub fn discard(&self) {
        let mut st = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        st.writer.take();
        self.remove();
    }

    /// Removes the file this log made ([`TraceLog::owned`]), if `path` still names it: a file
    /// someone renamed over it since (or a link put in its place) is theirs and stays. Unlinking
    /// goes by name, so a swap between this check and the unlink still wins; the check closes
    /// everything but that instant.
    fn remove(&self) {
        use std::os::unix::fs::MetadataExt;
        let Some(id) = self.owned else {
            return;
        };
        let ours = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| m.file_type().is_file() && (m.dev(), m.ino()) == id);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Whether `rdev` is the null device, 1:3 (Documentation/admin-guide/devices.txt).
fn is_null_device(rdev: u64) -> bool {
    libc::major(rdev) == 1 && libc::minor(rdev) == 3
}

/// Opens the trace's output, refusing to write over anything that is not a trace: a new file is
/// created (never through a link), an empty file or an old DTTRACE is replaced, and a pipe (a
/// shell's `>(...)`) or the null device is written to. Everything else is
/// refused: a file with other contents (QA: `bench --trace` overwrote the result store and any
/// file it was given), a block device (QA: it wrote over a filesystem), a directory, a socket,
/// or a link to a file. Returns the file and, when it is this log's own (removed on failure),
/// its device and inode, read from the open file itself.
fn open_output(path: &Path) -> anyhow::Result<(File, Option<FileId>)> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
    let shown = path.display();
    let nofollow = |o: &mut std::fs::OpenOptions| {
        o.write(true).custom_flags(libc::O_NOFOLLOW).mode(0o644);
    };
    let link = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut o = std::fs::OpenOptions::new();
            nofollow(&mut o);
            let f = o.create_new(true).open(path).with_context(|| {
                format!("cannot create the trace {shown}: pick a writable path")
            })?;
            let id = file_id(&f, path)?;
            return Ok((f, Some(id)));
        }
        Err(e) => return Err(e).with_context(|| format!("cannot write the trace to {shown}")),
        Ok(m) => m,
    };
    let target = std::fs::metadata(path)
        .with_context(|| format!("cannot write the trace to {shown}: a link to nothing"))?;
    let kind = target.file_type();
    // A pipe (a shell's `>(...)`, through its /dev/fd link) or the null device. Any other
    // character device is hardware a trace must not write to (review: a watchdog, raw flash,
    // /dev/mem).
    if kind.is_fifo() || (kind.is_char_device() && is_null_device(target.rdev())) {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(|| format!("cannot write the trace to {shown}"))?;
        return Ok((f, None));
    }
    let refuse = |what: &str| {
        anyhow::anyhow!(
            "{shown} is {what}: a trace is written to a new file (or over an old trace), name one"
        )
    };
    if link.file_type().is_symlink() {
        return Err(refuse("a symbolic link"));
    }
    if kind.is_block_device() {
        return Err(refuse("a block device (a trace never writes to a disk)"));
    }
    if kind.is_char_device() {
        return Err(refuse("a character device other than /dev/null"));
    }
    if !kind.is_file() {
        return Err(refuse(if kind.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        }));
    }
    let mut start = Vec::with_capacity(MAGIC.len());
    File::open(path)
        .and_then(|f| f.take(MAGIC.len() as u64).read_to_end(&mut start))
        .with_context(|| format!("cannot read {shown} to see whether it is an old trace"))?;
    if !start.is_empty() && start != MAGIC {
        return Err(anyhow::anyhow!(
            "{shown} exists and is not a disktier trace: a trace is written to a new file (or over an old trace); pick another path, or remove this one first"
        ));
    }
    let mut o = std::fs::OpenOptions::new();
    nofollow(&mut o);
    let f = o
        .truncate(true)
        .open(path)
        .with_context(|| format!("cannot write the trace to {shown}"))?;
    let id = file_id(&f, path)?;
    Ok((f, Some(id)))
}

/// The device and inode of the open file `f` (fstat: the file opened, whatever `path` names by
/// now).
fn file_id(f: &File, path: &Path) -> anyhow::Result<FileId> {
    use std::os::unix::fs::MetadataExt;
    let m = f
        .metadata()
        .with_context(|| format!("cannot read what {} is", path.display()))?;
    Ok((m.dev(), m.ino()))
}

impl IoLog for TraceLog {
    fn record(&self, rec: IoRecord) {
        let op = match rec.op {
            IoOp::Read => Op::Read,
            IoOp::Write => Op::Write,
            IoOp::Sync => Op::Sync,
        };
        let r = Record {
            t_ns: rec.t_ns,
            offset: rec.offset,
            len: rec.len,
            op,
            sync: op == Op::Sync || (op == Op::Write && self.sync_writes),
            stream: rec.stream,
            latency_ns: rec.latency_ns,
        };
        let mut st = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if st.error.is_some() {
            return;
        }
        if op != Op::Sync && r.len > 0 {
            let e = st.extents.entry(r.stream).or_insert((r.offset, r.end()));
            *e = (e.0.min(r.offset), e.1.max(r.end()));
        }
        if let Some(w) = st.writer.as_mut() {
            if let Err(e) = w.write(&r) {
                st.error = Some(e.to_string());
            }
        }
    }
}

/// The I/O log behind `bench --trace FILE`: a DTTRACE writer, to be [`TraceLog::finish`]ed after
/// the run (or [`TraceLog::discard`]ed when it failed).
pub fn open_io_log(path: &Path, target: &Path) -> anyhow::Result<Arc<TraceLog>> {
    refuse_target(path, target)?;
    Ok(Arc::new(TraceLog::create(path)?))
}

/// Refuses a trace file that is the file the job runs on (by name, or by device and inode when
/// both exist: a link): the job would write into its own trace (QA: `trace record d/f -o d/f`
/// said 'd/f already exists (0 bytes) ...: pass --destructive', the empty trace it had just
/// made, and with --destructive the job's data and the trace were written into one file).
fn refuse_target(output: &Path, target: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    // A path by its directory's canonical name, so `./f`, `d/../f` and `f` are one.
    let named = |p: &Path| -> Option<std::path::PathBuf> {
        let parent = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Some(std::fs::canonicalize(parent).ok()?.join(p.file_name()?))
    };
    let same = match (std::fs::metadata(output), std::fs::metadata(target)) {
        (Ok(o), Ok(t)) => o.dev() == t.dev() && o.ino() == t.ino(),
        _ => named(output).is_some_and(|o| Some(o) == named(target)),
    };
    if same {
        anyhow::bail!(
            "the trace {} is the file the job runs on ({}): the job would write over its own trace; write the trace elsewhere",
            output.display(),
            target.display()
        );
    }
    Ok(())
}

/// Refuses fio for `trace record`: only the native engine sees every I/O.
pub fn needs_native(tool: super::measure::Tool) -> anyhow::Result<()> {
    if tool != super::measure::Tool::Native {
        anyhow::bail!(
            "trace record needs the native engine (it sees every I/O): drop --engine fio"
        );
    }
    Ok(())
}

/// A recorded run: the measurement, how many I/Os the trace holds and the bytes they span
/// ([`TraceLog::span`]).
pub struct Recorded {
    pub measurement: super::measure::Measurement,
    pub records: u64,
    pub span: u64,
}

/// `trace record`: measures `req` (native engine only: it sees every I/O) while every I/O it
/// issues goes to a new trace at `output`; a run that fails leaves no trace behind. `stop` and
/// `progress` come from the front end, as for [`super::measure::measure_request`].
pub fn record(
    mut req: super::measure::Request<'_>,
    output: &Path,
    stop: Arc<std::sync::atomic::AtomicBool>,
    progress: Option<Arc<disktier_engine::ProgressFn>>,
) -> anyhow::Result<Recorded> {
    needs_native(req.run.tool)?;
    // Resolved here only to learn whether writes are O_DIRECT (the measurement resolves again).
    let direct = match req.workload()? {
        disktier_engine::Workload::Job(j) => j.direct,
        _ => false,
    };
    refuse_target(output, req.target)?;
    let log = Arc::new(TraceLog::create_with(output, direct)?);
    req.io_log = Some(log.clone() as Arc<dyn IoLog>);
    let measurement = match super::measure::measure_request(req, stop, progress) {
        Ok(m) => m,
        Err(e) => {
            log.discard();
            return Err(e);
        }
    };
    let records = log.finish()?;
    Ok(Recorded {
        measurement,
        records,
        span: log.span(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use disktier_testkit::{is_root, require};

    /// QA (session 27): `trace record d/f -o d/f` refused the job's file as existing (the empty
    /// trace it had just made), and with --destructive wrote the job's data and the trace into
    /// one file. The trace may not be the job's file under any name; another file is fine.
    #[test]
    fn the_trace_is_never_the_file_the_job_runs_on() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        let same = [
            f.clone(),
            d.path().join(".").join("f"),
            d.path().join("sub/../f"),
        ];
        std::fs::create_dir(d.path().join("sub")).unwrap();
        for o in &same {
            let e = refuse_target(o, &f).unwrap_err().to_string();
            assert!(e.contains("is the file the job runs on"), "{o:?}: {e}");
        }
        assert!(!f.exists(), "nothing was made");
        std::fs::write(&f, b"data").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert!(refuse_target(&link, &f).is_err());
        assert!(open_io_log(&link, &f).is_err());
        assert_eq!(std::fs::read(&f).unwrap(), b"data");
        assert!(refuse_target(&d.path().join("t.dtt"), &f).is_ok());
    }

    /// QA: `bench --trace FILE` wrote over whatever FILE was (the result store, a file of the
    /// user's, a block device's filesystem). Only a new file, an empty one or an old trace is
    /// written as a file; the rest is refused and left as it was.
    #[test]
    fn a_trace_never_writes_over_what_is_not_a_trace() {
        let d = tempfile::tempdir().unwrap();
        let precious = d.path().join("results.db");
        std::fs::write(&precious, "SQLite format 3\0").unwrap();
        let e = TraceLog::create(&precious).err().unwrap().to_string();
        assert!(e.contains("is not a disktier trace"), "{e}");
        assert_eq!(std::fs::read(&precious).unwrap(), b"SQLite format 3\0");
        let link = d.path().join("link.dtt");
        std::os::unix::fs::symlink(&precious, &link).unwrap();
        let e = TraceLog::create(&link).err().unwrap().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let e = TraceLog::create(d.path()).err().unwrap().to_string();
        assert!(e.contains("a directory"), "{e}");
        // A new trace, then the same path again: an old trace is replaced.
        let t = d.path().join("t.dtt");
        TraceLog::create(&t).unwrap().finish().unwrap();
        assert!(std::fs::read(&t).unwrap().starts_with(MAGIC));
        let again = TraceLog::create(&t).unwrap();
        again.discard();
        assert!(!t.exists(), "a failed run's own trace is removed");
    }

    /// A failed trace is removed by the file this log made, not by its path: a file put at the
    /// path since (renamed over it) is someone else's and survives the discard, as does a link.
    #[test]
    fn a_failed_trace_leaves_a_file_that_replaced_it() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("t.dtt");
        let log = TraceLog::create(&t).unwrap();
        let theirs = d.path().join("theirs");
        std::fs::write(&theirs, "not ours").unwrap();
        std::fs::rename(&theirs, &t).unwrap();
        log.discard();
        assert_eq!(std::fs::read(&t).unwrap(), b"not ours");
        let e = log.finish().err().map(|e| e.to_string());
        assert_eq!(e, None, "a discarded log has nothing left to finish");
        assert_eq!(std::fs::read(&t).unwrap(), b"not ours");

        // Our own file moved away and a link to it in its place: the link stays too.
        let u = d.path().join("u.dtt");
        let log = TraceLog::create(&u).unwrap();
        let moved = d.path().join("moved.dtt");
        std::fs::rename(&u, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &u).unwrap();
        log.discard();
        assert!(std::fs::symlink_metadata(&u)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(moved.exists());
    }

    /// The null device is written to and never removed (a failed trace to /dev/full used to
    /// delete the device node: root may unlink anything); any other character device is
    /// hardware a trace must not write to, and is refused.
    #[test]
    fn a_device_node_outlives_a_failed_trace() {
        if !require(is_root(), "root (mknod)") {
            return;
        }
        use std::os::unix::fs::FileTypeExt;
        let d = tempfile::tempdir().unwrap();
        let node = |name: &str, minor: &str| {
            let p = d.path().join(name);
            let ok = std::process::Command::new("mknod")
                .arg(&p)
                .args(["c", "1", minor])
                .status()
                .unwrap();
            assert!(ok.success());
            p
        };
        let null = node("null", "3");
        let log = TraceLog::create(&null).unwrap();
        log.discard();
        let kind = std::fs::symlink_metadata(&null).unwrap().file_type();
        assert!(kind.is_char_device());
        let full = node("full", "7");
        let e = TraceLog::create(&full).err().unwrap().to_string();
        assert!(e.contains("a character device other than /dev/null"), "{e}");
        assert!(std::fs::symlink_metadata(&full)
            .unwrap()
            .file_type()
            .is_char_device());
    }
}
