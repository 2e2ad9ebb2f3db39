//! The `etcd-server` model: what a running etcd server does to its disk, rather than etcd's
//! classic fio job (back-to-back 2300-byte writes with an fdatasync each). Two streams on the
//! same directory at the same time, as etcd's WAL and bbolt backend do:
//!
//! - WAL (etcd server/wal): proposals arrive at a steady rate; each raft Ready batch is one
//!   write of its records, appended to a preallocated segment file (`fallocate`, 64,000,000
//!   bytes: `SegmentSizeBytes` in wal.go), then one fdatasync. Proposals that arrive while a
//!   sync is under way join the next batch (one larger write, one fdatasync). A full segment
//!   is cut: truncated at its end, synced, the next preallocated file taken, the directory
//!   synced.
//! - Backend (bbolt, committed by etcd's batch tx 100 ms after the previous commit ended:
//!   `defaultBatchInterval`, a timer reset after each commit in backend.go `run`): the
//!   dirty 4 KiB pages, mostly new pages at the end of the file and a few rewritten at
//!   scattered offsets, each its own pwrite, then fdatasync; then the meta page (page 0 or 1,
//!   alternating), fdatasync again. The file grows by truncation, as bbolt grows it.
//!
//! The figures etcd itself exports are reproduced: `etcd_disk_wal_fsync_duration_seconds` is
//! the WAL fdatasync alone (the verdict figure), `etcd_disk_backend_commit_duration_seconds` is
//! the whole commit (pages, both syncs). Shapes were measured on etcd 3.4.23 under
//! `etcdctl check perf --load=s` with `strace -f -T` (docs/engine.md, "The etcd-server model").

use crate::error::EngineError;
use crate::result::{Cpu, DirStats, Results, RunDoc, SCHEMA_VERSION};
use crate::stats::DirAcc;
use crate::types::RunOptions;
use hdrhistogram::Histogram;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// etcd's WAL segment size (server/wal/wal.go `SegmentSizeBytes`: 64 * 1000 * 1000).
pub const SEGMENT_BYTES: u64 = 64_000_000;
/// bbolt's page size on Linux/x86-64 (the OS page size).
const PAGE: u64 = 4096;
/// Largest backend file the model grows (bbolt then reuses freed pages).
const DB_MAX: u64 = 1 << 30;

/// The model's knobs, with etcd's defaults and the shapes measured on etcd 3.4.
#[derive(Debug, Clone, PartialEq)]
pub struct EtcdServerSpec {
    /// Directory etcd would keep its data in; `member/wal` and `member/snap/db` are modelled
    /// as files `disktier-etcd-wal.N` and `disktier-etcd-db` in it, removed afterwards.
    pub dir: PathBuf,
    pub runtime: Duration,
    /// Proposals (puts) a second: `etcdctl check perf --load=s` offers 150.
    pub rate: u32,
    /// WAL bytes per proposal: 1392 for check perf's puts (traced: one 1392-byte write per
    /// fdatasync; records are CRC-framed and padded to 8 bytes).
    pub record: u64,
    /// Backend commit interval (etcd's `defaultBatchInterval`, 100 ms).
    pub commit_interval: Duration,
    /// Dirty pages per put in a commit: traced 11-13 pages for the ~15 puts of 100 ms.
    pub pages_per_put: f64,
}

impl EtcdServerSpec {
    pub fn new(dir: &Path, quick: bool) -> EtcdServerSpec {
        EtcdServerSpec {
            dir: dir.to_path_buf(),
            runtime: Duration::from_secs(if quick { 10 } else { 60 }),
            rate: 150,
            record: 1392,
            commit_interval: Duration::from_millis(100),
            pages_per_put: 0.8,
        }
    }

    fn validate(&self) -> Result<(), EngineError> {
        let bad = |option: &'static str, value: String, fix: &str| EngineError::BadOption {
            option,
            value,
            fix: fix.to_string().into(),
        };
        if self.rate == 0 || self.rate > 100_000 {
            return Err(bad(
                "rate",
                self.rate.to_string(),
                "use 1 to 100000 proposals a second",
            ));
        }
        if self.record == 0 || self.record > 1 << 20 {
            return Err(bad(
                "record",
                self.record.to_string(),
                "use a WAL record of 1 byte to 1 MiB",
            ));
        }
        if self.runtime.is_zero() {
            return Err(bad("runtime", "0".into(), "use a runtime above zero"));
        }
        Ok(())
    }
}

/// A finished etcd-server run.
#[derive(Debug, Clone)]
pub struct EtcdServerMeasured {
    /// `results.write`: WAL writes; `results.sync`: WAL fdatasyncs (etcd's wal_fsync).
    pub doc: RunDoc,
    pub wal_sync_hist: Histogram<u64>,
    /// Whole backend commits (etcd's backend_commit).
    pub commit: DirStats,
    pub commit_hist: Histogram<u64>,
    /// Backend fdatasyncs alone (two per commit).
    pub db_sync: DirStats,
}

/// Creates (or truncates) `p` for reading and writing, first noting it in `files` so that it
/// is removed at the end even when the open fails half-way.
fn create_tracked(files: &std::sync::Mutex<Vec<PathBuf>>, p: &Path) -> Result<File, EngineError> {
    files
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(p.to_path_buf());
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(p)
        .map_err(|e| io_err(p, "write", e))
}

fn io_err(path: &Path, what: &'static str, e: std::io::Error) -> EngineError {
    EngineError::from_open(path, what, e)
}

fn fdatasync(f: &File) -> std::io::Result<()> {
    rustix::fs::fdatasync(f).map_err(std::io::Error::from)
}

/// Files the run created, removed when dropped.
struct Cleanup(Vec<PathBuf>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

struct WalOut {
    write: DirAcc,
    sync: DirAcc,
}

/// The WAL stream until `deadline` or `stop`.
fn wal(
    spec: &EtcdServerSpec,
    files: &std::sync::Mutex<Vec<PathBuf>>,
    stop: &AtomicBool,
    puts: &AtomicU64,
    t0: Instant,
    deadline: Instant,
) -> Result<WalOut, EngineError> {
    let dir = File::open(&spec.dir).map_err(|e| io_err(&spec.dir, "read", e))?;
    let open_segment = |n: u32| -> Result<File, EngineError> {
        let p = spec.dir.join(format!("disktier-etcd-wal.{n}"));
        let f = create_tracked(files, &p)?;
        rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::empty(), 0, SEGMENT_BYTES)
            .map_err(|e| io_err(&p, "write", e.into()))?;
        Ok(f)
    };
    let mut seg_no = 0;
    let mut cur = open_segment(seg_no)?;
    fdatasync(&dir).map_err(|e| io_err(&spec.dir, "write", e))?;
    // etcd's file pipeline keeps the next segment allocated ahead.
    let mut next = open_segment(seg_no + 1)?;
    let mut off = 0u64;
    let mut issued = 0u64;
    let interval_ns = 1e9 / spec.rate as f64;
    let buf = vec![0x5au8; (spec.record * 64).min(64 << 20) as usize];
    let mut out = WalOut {
        write: DirAcc::default(),
        sync: DirAcc::default(),
    };
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let arrived = (now.duration_since(t0).as_nanos() as f64 / interval_ns) as u64 + 1;
        if arrived <= issued {
            // Wait for the next proposal.
            let due = t0 + Duration::from_nanos((issued as f64 * interval_ns) as u64);
            std::thread::sleep(due.saturating_duration_since(now).min(deadline - now));
            continue;
        }
        // Everything that arrived since the last sync is one Ready batch (bounded like etcd's
        // raft MaxSizePerMsg keeps batches bounded).
        let n = (arrived - issued).min(64);
        issued += n;
        puts.fetch_add(n, Ordering::Relaxed);
        let len = n * spec.record;
        if off + len > SEGMENT_BYTES {
            // Cut: truncate at the end of the records, sync, take the next file, sync the dir.
            rustix::fs::ftruncate(&cur, off).map_err(|e| io_err(&spec.dir, "write", e.into()))?;
            fdatasync(&cur).map_err(|e| io_err(&spec.dir, "write", e))?;
            seg_no += 1;
            cur = next;
            next = open_segment(seg_no + 1)?;
            fdatasync(&dir).map_err(|e| io_err(&spec.dir, "write", e))?;
            off = 0;
        }
        let t = Instant::now();
        cur.write_all_at(&buf[..len as usize], off)
            .map_err(|e| io_err(&spec.dir, "write", e))?;
        out.write.record(t.elapsed().as_nanos() as u64, len);
        off += len;
        let t = Instant::now();
        fdatasync(&cur).map_err(|e| io_err(&spec.dir, "write", e))?;
        out.sync.record(t.elapsed().as_nanos() as u64, 0);
    }
    drop(next);
    Ok(out)
}

struct DbOut {
    commit: DirAcc,
    sync: DirAcc,
}

/// A small xorshift for the scattered page offsets (repeatable runs).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// The backend stream: a commit `commit_interval` after the previous one ended, while the WAL
/// runs.
fn backend(
    spec: &EtcdServerSpec,
    files: &std::sync::Mutex<Vec<PathBuf>>,
    stop: &AtomicBool,
    puts: &AtomicU64,
    deadline: Instant,
) -> Result<DbOut, EngineError> {
    let p = spec.dir.join("disktier-etcd-db");
    let f = create_tracked(files, &p)?;
    let e = |e: std::io::Error| io_err(&p, "write", e);
    // bbolt's initial file: two meta pages, a freelist page and an empty leaf; 32 KiB mapped.
    let page = vec![0xa5u8; PAGE as usize];
    for i in 0..4 {
        f.write_all_at(&page, i * PAGE).map_err(e)?;
    }
    let mut size = 32 << 10;
    rustix::fs::ftruncate(&f, size).map_err(|x| e(x.into()))?;
    fdatasync(&f).map_err(e)?;
    let mut tail = 4u64;
    let mut txid = 0u64;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut last_puts = 0u64;
    let mut out = DbOut {
        commit: DirAcc::default(),
        sync: DirAcc::default(),
    };
    let mut next = Instant::now() + spec.commit_interval;
    loop {
        let now = Instant::now();
        if stop.load(Ordering::Relaxed) || now >= deadline {
            break;
        }
        if now < next {
            std::thread::sleep((next - now).min(deadline - now));
            continue;
        }
        let p_now = puts.load(Ordering::Relaxed);
        let new_puts = p_now - last_puts;
        last_puts = p_now;
        if new_puts == 0 {
            // etcd commits only when the batch has pending writes.
            next = Instant::now() + spec.commit_interval;
            continue;
        }
        let pages = ((new_puts as f64 * spec.pages_per_put).ceil() as u64).clamp(2, 1024);
        // Mostly new pages at the end (a growing db allocates there), two rewritten at
        // scattered offsets (branch pages, the freelist).
        let scattered = 2.min(pages);
        let fresh = pages - scattered;
        if (tail + fresh) * PAGE > DB_MAX {
            tail = 4;
        }
        let t = Instant::now();
        if (tail + fresh) * PAGE > size {
            // bbolt grows the mapping (doubling up to 1 GiB) by truncate, then syncs.
            while (tail + fresh) * PAGE > size {
                size = (size * 2).min(DB_MAX);
            }
            rustix::fs::ftruncate(&f, size).map_err(|x| e(x.into()))?;
            fdatasync(&f).map_err(e)?;
        }
        for i in 0..fresh {
            f.write_all_at(&page, (tail + i) * PAGE).map_err(e)?;
        }
        for _ in 0..scattered {
            let pg = 2 + rng.below(tail.max(3) - 2);
            f.write_all_at(&page, pg * PAGE).map_err(e)?;
        }
        tail += fresh;
        let ts = Instant::now();
        fdatasync(&f).map_err(e)?;
        out.sync.record(ts.elapsed().as_nanos() as u64, 0);
        txid += 1;
        f.write_all_at(&page, (txid % 2) * PAGE).map_err(e)?;
        let ts = Instant::now();
        fdatasync(&f).map_err(e)?;
        out.sync.record(ts.elapsed().as_nanos() as u64, 0);
        out.commit
            .record(t.elapsed().as_nanos() as u64, (pages + 1) * PAGE);
        // etcd's backend loop (mvcc/backend/backend.go, `run`) resets its timer after the
        // commit: the next commit is an interval after this one ended, not on a fixed beat,
        // so a slow disk commits less often with more pages each.
        next = Instant::now() + spec.commit_interval;
    }
    Ok(out)
}

/// Runs the model in `spec.dir` (a directory on the filesystem etcd would use).
pub fn run(spec: &EtcdServerSpec, opts: &RunOptions) -> Result<EtcdServerMeasured, EngineError> {
    spec.validate()?;
    let c = crate::target::classify(&spec.dir)?;
    if c.kind != crate::target::Kind::Directory {
        return Err(EngineError::BadOption {
            option: "target",
            value: spec.dir.display().to_string(),
            fix: "the etcd-server model runs in the directory etcd would use (e.g. /var/lib/etcd)"
                .into(),
        });
    }
    // Two WAL segments (allocated) and a db that stays far below them in a short run.
    let need = 2 * SEGMENT_BYTES + (64 << 20);
    c.check_writable(&spec.dir)?;
    // The model's size is fixed (etcd's segment size): only more room helps.
    c.check_room(&spec.dir, need, |_| {
        "free some space or pick a directory on another filesystem (the model preallocates two 64 MB WAL segments, as etcd does)".into()
    })?;
    let started_at = crate::run::now_rfc3339();
    let files = std::sync::Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    let puts = AtomicU64::new(0);
    let t0 = Instant::now();
    let deadline = t0 + spec.runtime;
    let cpu0 = crate::uring::sys::cpu_times();
    let (w, b) = std::thread::scope(|s| {
        let (files, stop, puts) = (&files, &stop, &puts);
        let watch = s.spawn(move || {
            // Ctrl-C reaches both streams.
            while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
                if opts.stop.load(Ordering::Relaxed) {
                    stop.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let hb = s.spawn(move || {
            let r = backend(spec, files, stop, puts, deadline);
            if r.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            r
        });
        let w = wal(spec, files, stop, puts, t0, deadline);
        if w.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        let b = hb.join().unwrap_or(Err(EngineError::WorkerPanicked(1)));
        stop.store(true, Ordering::Relaxed);
        let _ = watch.join();
        (w, b)
    });
    let _cleanup = Cleanup(files.into_inner().unwrap_or_else(|e| e.into_inner()));
    let (w, b) = (w?, b?);
    let secs = t0.elapsed().as_secs_f64().min(spec.runtime.as_secs_f64());
    let cpu1 = crate::uring::sys::cpu_times();
    let interrupted = opts.stop.load(Ordering::Relaxed);
    let job = serde_json::json!({
        "name": "etcd_server",
        "target": spec.dir,
        "model": "etcd-server",
        "rate": spec.rate,
        "record": spec.record,
        "segment_bytes": SEGMENT_BYTES,
        "commit_interval": format!("{}ms", spec.commit_interval.as_millis()),
        "pages_per_put": spec.pages_per_put,
        "runtime": format!("{}s", spec.runtime.as_secs()),
    });
    let doc = RunDoc {
        schema_version: SCHEMA_VERSION,
        engine: "disktier".into(),
        profile: Some("etcd-server".into()),
        quick: opts.quick,
        job,
        target: c.info,
        host: crate::host::detect(),
        started_at,
        duration_s: secs,
        interrupted,
        results: Results {
            read: None,
            write: Some(w.write.dir_stats(secs)),
            // Each WAL fdatasync is timed as it returns: counted exactly against etcd's raft
            // timeouts, as the etcd profile's are (QA on dt-s23: the model printed "how many
            // fsyncs took that long is not in this result" under its own max).
            sync: Some(w.sync.sync_stats(secs)),
            cpu: Cpu {
                usr_s: (cpu1.0 - cpu0.0).max(0.0),
                sys_s: (cpu1.1 - cpu0.1).max(0.0),
            },
            small_files: None,
        },
        series: Vec::new(),
        verdicts: Vec::new(),
        warnings: Vec::new(),
    };
    Ok(EtcdServerMeasured {
        doc,
        wal_sync_hist: w.sync.hist,
        commit: b.commit.dir_stats(secs),
        commit_hist: b.commit.hist,
        db_sync: b.sync.dir_stats(secs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_both_streams_at_their_rates_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let spec = EtcdServerSpec {
            runtime: Duration::from_secs(2),
            ..EtcdServerSpec::new(d.path(), true)
        };
        let m = match run(&spec, &RunOptions::default()) {
            Ok(m) => m,
            // Some temp filesystems (tmpfs on a small VM) lack the room for two segments.
            Err(EngineError::NoSpace { .. }) => return,
            Err(e) => panic!("{e}"),
        };
        let sync = m.doc.results.sync.as_ref().unwrap();
        // 150 proposals a second for 2 s, batched: at most 300 syncs, and far more than 10.
        assert!(sync.ios > 10 && sync.ios <= 301, "{}", sync.ios);
        let w = m.doc.results.write.as_ref().unwrap();
        assert_eq!(w.bytes % 1392, 0);
        assert!(w.bytes >= 1392 * 250, "{}", w.bytes);
        // A commit 100 ms after the previous one ended: at most 20 in 2 s (fewer as commits
        // take time), each two fdatasyncs.
        assert!((5..=20).contains(&m.commit.ios), "{}", m.commit.ios);
        assert_eq!(m.db_sync.ios, 2 * m.commit.ios);
        assert_eq!(m.wal_sync_hist.len(), sync.ios);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn rejects_bad_knobs() {
        let d = tempfile::tempdir().unwrap();
        let spec = EtcdServerSpec {
            rate: 0,
            ..EtcdServerSpec::new(d.path(), true)
        };
        assert!(run(&spec, &RunOptions::default())
            .unwrap_err()
            .to_string()
            .contains("rate=0"));
    }
}
