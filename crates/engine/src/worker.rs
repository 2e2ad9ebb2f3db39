//! One job thread: what every I/O backend shares. The [`Recorder`] takes each completion into
//! the thread's own accumulators (no locks), rolls the per-second record over to the main
//! thread, and says when to stop (runtime over, Ctrl-C). The [`IoBackend`] trait is what a backend
//! implements: issue the [`IoPlan`]'s I/Os on a file and report completions.

use crate::error::EngineError;
use crate::plan::IoPlan;
use crate::stats::{DirAcc, SecRecord};
use crate::types::{IoLog, IoOp, IoRecord};
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;

/// Counters the main thread reads for the progress line, one cache line per worker so that
/// workers do not slow each other down.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Live {
    /// Completed I/Os, ramp included.
    pub ios: AtomicU64,
    pub bytes: AtomicU64,
}

/// Which sync call the job issues after every N writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    None,
    Fsync,
    Fdatasync,
}

/// Takes completions on the I/O path.
pub struct Recorder<'a> {
    /// Time 0 of the run (IoLog timestamps count from here).
    t0: u64,
    /// Completions before this are ramp: not counted.
    ramp_end: u64,
    /// Completions after this are not counted; the loop stops.
    deadline: u64,
    next_sec: u64,
    cur: SecRecord,
    pub read: DirAcc,
    pub write: DirAcc,
    pub sync: DirAcc,
    /// Last counted completion.
    pub last_ns: u64,
    all_ios: u64,
    all_bytes: u64,
    tx: Sender<SecRecord>,
    live: &'a Live,
    stop: &'a AtomicBool,
    io_log: Option<&'a dyn IoLog>,
    /// The address space logged I/Os are in ([`IoRecord::stream`]).
    pub stream: u32,
}

const SEC: u64 = 1_000_000_000;

impl<'a> Recorder<'a> {
    pub fn new(
        t0: u64,
        ramp_ns: u64,
        runtime_ns: Option<u64>,
        tx: Sender<SecRecord>,
        live: &'a Live,
        stop: &'a AtomicBool,
        io_log: Option<&'a dyn IoLog>,
    ) -> Recorder<'a> {
        // Saturating: a ramp of centuries is a ramp that does not end (QA: an overflow panic).
        let ramp_end = t0.saturating_add(ramp_ns);
        Recorder {
            t0,
            ramp_end,
            deadline: runtime_ns.map_or(u64::MAX, |r| ramp_end.saturating_add(r)),
            next_sec: ramp_end.saturating_add(SEC),
            cur: SecRecord::new(0),
            read: DirAcc::default(),
            write: DirAcc::default(),
            sync: DirAcc::default(),
            last_ns: ramp_end,
            all_ios: 0,
            all_bytes: 0,
            tx,
            live,
            stop,
            io_log,
            stream: 0,
        }
    }

    pub fn ramp_end(&self) -> u64 {
        self.ramp_end
    }

    /// Records one completed I/O of `len` bytes, submitted at `submit_ns`, completed at `now`.
    #[inline]
    pub fn complete(&mut self, op: IoOp, offset: u64, len: u64, submit_ns: u64, now: u64) {
        if op == IoOp::Sync {
            return self.sync_done(submit_ns, now);
        }
        self.all_ios += 1;
        self.all_bytes += len;
        let Some(lat) = self.logged_in_window(submit_ns, now, offset, len as u32, op) else {
            return;
        };
        crate::stats::record_ns(&mut self.cur.lat, lat);
        match op {
            IoOp::Read => {
                self.read.record(lat, len);
                self.cur.read_ios += 1;
                self.cur.read_bytes += len;
            }
            IoOp::Write => {
                self.write.record(lat, len);
                self.cur.write_ios += 1;
                self.cur.write_bytes += len;
            }
            IoOp::Sync => {}
        }
    }

    /// Records one fsync/fdatasync that ran from `start` to `now`.
    #[inline]
    pub fn sync_done(&mut self, start: u64, now: u64) {
        let Some(lat) = self.logged_in_window(start, now, 0, 0, IoOp::Sync) else {
            return;
        };
        self.sync.record(lat, 0);
        crate::stats::record_ns(&mut self.cur.sync, lat);
    }

    /// Logs one I/O submitted at `submit_ns` and finished at `now` (with `--trace`) and, when
    /// it ended inside the measured window, rolls to its second and moves `last_ns`: returns its
    /// latency when it counts.
    #[inline]
    fn logged_in_window(
        &mut self,
        submit_ns: u64,
        now: u64,
        offset: u64,
        len: u32,
        op: IoOp,
    ) -> Option<u64> {
        let lat = now.saturating_sub(submit_ns);
        if let Some(log) = self.io_log {
            log.record(IoRecord {
                t_ns: submit_ns.saturating_sub(self.t0),
                offset,
                len,
                op,
                latency_ns: lat,
                stream: self.stream,
            });
        }
        if now < self.ramp_end || now > self.deadline {
            return None;
        }
        if now >= self.next_sec {
            self.roll(now);
        }
        self.last_ns = self.last_ns.max(now);
        Some(lat)
    }

    /// Sends the finished second to the main thread and starts the one `now` falls in.
    #[cold]
    fn roll(&mut self, now: u64) {
        let sec = (now - self.ramp_end) / SEC;
        let done = std::mem::replace(&mut self.cur, SecRecord::new(sec));
        if !done.is_empty() {
            // The main thread may be gone if the run failed; the record is then moot.
            let _ = self.tx.send(done);
        }
        self.next_sec = self.ramp_end + (sec + 1) * SEC;
    }

    /// Publishes progress and says whether to go on: false once the runtime is over or a stop
    /// was requested. Call once per loop round (not per I/O).
    #[inline]
    pub fn tick(&mut self, now: u64) -> bool {
        self.live.ios.store(self.all_ios, Ordering::Relaxed);
        self.live.bytes.store(self.all_bytes, Ordering::Relaxed);
        now < self.deadline && !self.stop.load(Ordering::Relaxed)
    }

    /// Whether a stop was requested from outside (Ctrl-C or another thread's error).
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Sends the last partial second.
    pub fn finish(&mut self) {
        let done = std::mem::replace(&mut self.cur, SecRecord::new(0));
        if !done.is_empty() {
            let _ = self.tx.send(done);
        }
        self.live.ios.store(self.all_ios, Ordering::Relaxed);
        self.live.bytes.store(self.all_bytes, Ordering::Relaxed);
    }
}

/// Everything a backend needs to run one job thread.
pub struct WorkerCtx<'a> {
    pub jobnum: u32,
    pub file: &'a File,
    pub path: &'a Path,
    pub plan: IoPlan,
    pub bs: u64,
    pub iodepth: u32,
    /// I/Os per submission (fio's iodepth_batch_submit; 0: iodepth).
    pub batch: u32,
    pub sync: SyncKind,
    /// Sync after this many writes (0: never).
    pub sync_every: u32,
    /// Buffer alignment: the device's logical block size for O_DIRECT, 4096 otherwise.
    pub align: usize,
    /// Seed for the write buffers' contents.
    pub seed: u64,
    pub rec: Recorder<'a>,
}

impl WorkerCtx<'_> {
    pub fn io_error(&self, op: &'static str, e: std::io::Error) -> EngineError {
        EngineError::Io {
            path: self.path.to_path_buf(),
            op,
            source: e,
        }
    }
}

/// An I/O backend: runs a job thread's plan to the end (or until the recorder says stop).
pub trait IoBackend {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), EngineError>;
}

/// An aligned buffer carved out of a plain `Vec` (no unsafe needed): O_DIRECT wants the
/// memory aligned to the logical block size.
pub struct AlignedBuf {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    pub fn new(len: usize, align: usize) -> AlignedBuf {
        let align = align.max(1);
        let storage = vec![0u8; len + align];
        let start = storage.as_ptr().align_offset(align);
        AlignedBuf {
            storage,
            start,
            len,
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffers_are_aligned() {
        for align in [512usize, 4096] {
            let mut b = AlignedBuf::new(10_000, align);
            assert_eq!(b.as_slice().as_ptr() as usize % align, 0);
            assert_eq!(b.as_mut_slice().len(), 10_000);
        }
    }

    #[test]
    fn recorder_excludes_ramp_and_rolls_seconds() {
        let (tx, rx) = std::sync::mpsc::channel();
        let live = Live::default();
        let stop = AtomicBool::new(false);
        let t0 = 1_000 * SEC;
        let mut r = Recorder::new(t0, SEC, Some(3 * SEC), tx, &live, &stop, None);
        // During ramp: not counted.
        r.complete(IoOp::Read, 0, 4096, t0, t0 + 500);
        assert_eq!(r.read.ios, 0);
        // Second 0 and 1 of the measured phase.
        r.complete(IoOp::Read, 0, 4096, t0 + SEC, t0 + SEC + 1000);
        r.complete(IoOp::Write, 0, 4096, t0 + SEC, t0 + SEC + 2000);
        r.complete(IoOp::Read, 0, 4096, t0 + 2 * SEC, t0 + 2 * SEC + 10);
        r.sync_done(t0 + 2 * SEC, t0 + 2 * SEC + 50);
        // After the deadline: not counted, and tick says stop.
        r.complete(IoOp::Read, 0, 4096, t0 + 4 * SEC, t0 + 4 * SEC + 10);
        assert!(!r.tick(t0 + 4 * SEC + 10));
        r.finish();
        assert_eq!((r.read.ios, r.write.ios, r.sync.ios), (2, 1, 1));
        assert_eq!(live.ios.load(Ordering::Relaxed), 5);
        let recs: Vec<SecRecord> = rx.try_iter().collect();
        assert_eq!(recs.len(), 2);
        assert_eq!(
            (recs[0].sec, recs[0].read_ios, recs[0].write_ios),
            (0, 1, 1)
        );
        assert_eq!(
            (recs[1].sec, recs[1].read_ios, recs[1].sync.len()),
            (1, 1, 1)
        );
        stop.store(true, Ordering::Relaxed);
        assert!(!r.tick(t0 + SEC));
    }
}
