//! The I/O phase: one thread per job (`numjobs`) on the chosen backend, started together
//! behind a barrier; the calling thread watches them (see [`super::monitor`]) until all have
//! finished, then measures the CPU time they used.

use super::monitor::{self, merge_sec, Watch};
use super::prepare::{FileUse, Setup};
use crate::error::EngineError;
use crate::job::{IoEngineKind, Job};
use crate::plan::{now_ns, IoPlan};
use crate::result::Cpu;
use crate::stats::{DirAcc, SecRecord};
use crate::sync_io::SyncEngine;
use crate::types::{IoLog, RunOptions};
use crate::uring::{self, UringEngine};
use crate::worker::{IoBackend, Live, Recorder, WorkerCtx};
use std::collections::BTreeMap;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Barrier;

/// One thread's accumulators when it is done.
pub(super) struct WorkerOut {
    pub read: DirAcc,
    pub write: DirAcc,
    pub sync: DirAcc,
    pub last_ns: u64,
    pub ramp_end: u64,
}

/// What the I/O phase leaves for [`super::collect`].
pub(super) struct Dispatched {
    pub outs: Vec<Result<WorkerOut, EngineError>>,
    pub secs: BTreeMap<u64, SecRecord>,
    pub cpu: Cpu,
    pub interrupted: bool,
}

/// Runs the I/O phase of `job` (as `resolved`) on the opened `files`.
pub(super) fn dispatch(
    job: &Job,
    resolved: &Job,
    uses: &[FileUse],
    files: &[File],
    setup: &Setup,
    opts: &RunOptions,
) -> Dispatched {
    let n = setup.numjobs;
    let stop = AtomicBool::new(false);
    let live: Vec<Live> = (0..n).map(|_| Live::default()).collect();
    let finished = AtomicUsize::new(0);
    let barrier = Barrier::new(n + 1);
    let (tx, rx) = std::sync::mpsc::channel::<SecRecord>();
    let io_log: Option<&dyn IoLog> = opts.io_log.as_deref();

    let mut secs: BTreeMap<u64, SecRecord> = BTreeMap::new();
    let mut cpu = Cpu::default();
    // Stopped while laying out: no I/O phase, an interrupted (empty) result.
    let stopped_early = opts.stop.load(Ordering::Relaxed);
    let mut interrupted = stopped_early;
    let outs: Vec<Result<WorkerOut, EngineError>> = if stopped_early {
        drop(tx);
        Vec::new()
    } else {
        std::thread::scope(|s| {
            let mut handles = Vec::new();
            for j in 0..n {
                let u = &uses[j.min(uses.len() - 1)];
                let file = &files[j.min(files.len() - 1)];
                // Jobs on one path share its address space in a trace.
                let stream = uses.iter().position(|x| x.path == u.path).unwrap_or(0) as u32;
                let (live, stop, barrier, finished) = (&live[j], &stop, &barrier, &finished);
                let tx = tx.clone();
                handles.push(s.spawn(move || {
                    worker_thread(
                        j,
                        resolved,
                        u,
                        file,
                        setup,
                        Shared {
                            live,
                            stop,
                            barrier,
                            finished,
                            io_log,
                            tx,
                            stream,
                        },
                    )
                }));
            }
            drop(tx);
            barrier.wait();
            let watched = monitor::watch(
                &Watch {
                    job,
                    opts,
                    setup,
                    live: &live,
                    finished: &finished,
                    stop: &stop,
                    rx: &rx,
                },
                &mut secs,
            );
            interrupted |= watched.interrupted;
            let outs: Vec<_> = handles
                .into_iter()
                .enumerate()
                .map(|(j, h)| {
                    h.join()
                        .unwrap_or(Err(EngineError::WorkerPanicked(j as u32)))
                })
                .collect();
            let cpu1 = uring::sys::cpu_times();
            let cpu0 = watched.cpu0.unwrap_or(cpu1);
            cpu = Cpu {
                usr_s: (cpu1.0 - cpu0.0).max(0.0),
                sys_s: (cpu1.1 - cpu0.1).max(0.0),
            };
            if opts.stop.load(Ordering::Relaxed) {
                interrupted = true;
            }
            outs
        })
    };
    for r in rx.try_iter() {
        merge_sec(&mut secs, r);
    }
    Dispatched {
        outs,
        secs,
        cpu,
        interrupted,
    }
}

/// What a worker thread shares with the others and the monitor.
struct Shared<'a> {
    live: &'a Live,
    stop: &'a AtomicBool,
    barrier: &'a Barrier,
    finished: &'a AtomicUsize,
    io_log: Option<&'a dyn IoLog>,
    tx: Sender<SecRecord>,
    /// The trace's address space for this job's I/Os.
    stream: u32,
}

/// One job thread: pin, wait for the others, run the backend, hand back the accumulators.
fn worker_thread(
    j: usize,
    resolved: &Job,
    u: &FileUse,
    file: &File,
    setup: &Setup,
    shared: Shared<'_>,
) -> Result<WorkerOut, EngineError> {
    let pinned = pin_thread(&resolved.cpus_allowed);
    shared.barrier.wait();
    if let Err(e) = pinned {
        shared.stop.store(true, Ordering::Relaxed);
        shared.finished.fetch_add(1, Ordering::Release);
        return Err(e);
    }
    let t0 = now_ns();
    let mut rec = Recorder::new(
        t0,
        setup.ramp_ns,
        setup.runtime_ns,
        shared.tx,
        shared.live,
        shared.stop,
        shared.io_log,
    );
    rec.stream = shared.stream;
    let ramp_end = rec.ramp_end();
    let mut ctx = WorkerCtx {
        jobnum: j as u32,
        file,
        path: &u.path,
        plan: IoPlan::new(resolved, j as u32, u.start, u.len),
        bs: resolved.bs,
        iodepth: resolved.iodepth,
        batch: resolved.iodepth_batch_submit,
        sync: setup.sync_kind,
        sync_every: setup.sync_every,
        align: setup.align,
        seed: resolved.randseed.wrapping_add(j as u64 + 1),
        rec,
    };
    let r = match resolved.ioengine {
        IoEngineKind::IoUring => UringEngine.run(&mut ctx),
        IoEngineKind::Psync => SyncEngine { positional: true }.run(&mut ctx),
        IoEngineKind::Sync => SyncEngine { positional: false }.run(&mut ctx),
    };
    if r.is_err() {
        // One thread failing stops the others.
        shared.stop.store(true, Ordering::Relaxed);
    }
    shared.finished.fetch_add(1, Ordering::Release);
    r.map(|_| WorkerOut {
        last_ns: ctx.rec.last_ns,
        ramp_end,
        read: std::mem::take(&mut ctx.rec.read),
        write: std::mem::take(&mut ctx.rec.write),
        sync: std::mem::take(&mut ctx.rec.sync),
    })
}

/// Keeps the calling thread on the CPUs of `list` (fio's `cpus_allowed`); nothing when empty.
fn pin_thread(list: &str) -> Result<(), EngineError> {
    if list.is_empty() {
        return Ok(());
    }
    let cpus = crate::job::parse_cpu_list(list).map_err(|why| EngineError::BadOption {
        option: "cpus_allowed",
        value: list.to_string(),
        fix: why.into(),
    })?;
    let mut set = rustix::thread::CpuSet::new();
    for c in cpus {
        set.set(c as usize);
    }
    rustix::thread::sched_setaffinity(None, &set).map_err(|e| EngineError::BadOption {
        option: "cpus_allowed",
        value: list.to_string(),
        fix: format!(
            "the kernel refused it ({e}): name CPUs this machine has online (see nproc or /sys/devices/system/cpu/online)"
        )
        .into(),
    })
}
