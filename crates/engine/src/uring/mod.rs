//! The io_uring backend: keeps `iodepth` I/Os in flight with registered files and buffers
//! (IORING_OP_READ_FIXED / WRITE_FIXED), allocates nothing per I/O, and moves I/Os as fio's
//! io_uring engine does: each submission carries `iodepth_batch_submit` I/Os (1 by default, so
//! the device gets every I/O as soon as a slot is free) and also runs the completion work the
//! kernel deferred to this thread (DEFER_TASKRUN), so the completions it finds are reaped and
//! their slots reused without sleeping. Only when no slot is free does the thread wait, for one
//! completion. Submitting a whole batch in one call instead (the loop before) left the loop
//! device's worker idle while the batch was being built: 3-8 % fewer IOPS on a RAM-backed loop
//! device (BENCHMARKS.md).
//! fsync/fdatasync after every N writes drain the queue first, then run as IORING_OP_FSYNC
//! (with IORING_FSYNC_DATASYNC for fdatasync), timed on their own.
//!
//! Timestamps: one clock read before a batch is queued (its submission time) and one after each
//! `io_uring_enter` returns (the completion time of every I/O reaped after that call; fio's
//! `init_icd` also takes one timestamp per completion batch), so the latency runs from
//! submission to completion: fio's `lat` (slat + clat). fio's `clat` starts after its submitting
//! `io_uring_enter` returns, which on a RAM-backed loop device at iodepth 1 is about 1 us less;
//! on a real disk the difference is lost in the device time.
//!
//! All of the engine's `unsafe` is in this module (and `sys.rs` beside it).

pub mod sys;

use crate::error::EngineError;
use crate::plan::{now_ns, Rng};
use crate::sync_io::sync_name;
use crate::types::IoOp;
use crate::worker::{AlignedBuf, IoBackend, SyncKind, WorkerCtx};
use io_uring::{opcode, squeue, types, IoUring};
use std::os::fd::AsRawFd;

/// Whether io_uring can be used here; the reason when not (the caller falls back to psync).
pub fn probe() -> Result<(), String> {
    // Documentation/admin-guide/sysctl/kernel.rst: 0 = on, 1 = only for io_uring_group, 2 = off.
    if let Ok(s) = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
        if s.trim() == "2" {
            return Err("the sysctl kernel.io_uring_disabled is 2".into());
        }
    }
    IoUring::new(2)
        .map(drop)
        .map_err(|e| format!("io_uring_setup failed: {e}"))
}

/// A ring with the cheapest completion mode the kernel has: DEFER_TASKRUN + SINGLE_ISSUER
/// (Linux 6.1) runs completion work in this thread when it enters the kernel, then
/// COOP_TASKRUN (5.19), then the plain ring. TASKRUN_FLAG makes the kernel say when such work
/// is pending, so that a plain `submit` runs it too (the crate then passes GETEVENTS).
fn build_ring(entries: u32) -> std::io::Result<IoUring> {
    let cq = entries * 2;
    IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_taskrun_flag()
        .setup_cqsize(cq)
        .build(entries)
        .or_else(|_| {
            IoUring::builder()
                .setup_coop_taskrun()
                .setup_taskrun_flag()
                .setup_cqsize(cq)
                .build(entries)
        })
        .or_else(|_| IoUring::builder().setup_cqsize(cq).build(entries))
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    op: IoOp,
    offset: u64,
    t: u64,
}

/// user_data of the sync operation (slots use their index).
const SYNC_TAG: u64 = u64::MAX;

/// Uses the registered file (index 0) when registration worked, the plain fd otherwise.
macro_rules! with_fd {
    ($fixed:expr, $fd:expr, |$f:ident| $body:expr) => {
        if $fixed {
            let $f = types::Fixed(0);
            $body
        } else {
            let $f = types::Fd($fd);
            $body
        }
    };
}

pub struct UringEngine;

struct Setup {
    fixed_file: bool,
    fixed_bufs: bool,
    fd: i32,
    len: u32,
}

impl Setup {
    #[inline]
    fn entry(&self, op: IoOp, buf: *mut u8, offset: u64, idx: u32) -> squeue::Entry {
        let e = match (op, self.fixed_bufs) {
            (IoOp::Read, true) => with_fd!(self.fixed_file, self.fd, |f| opcode::ReadFixed::new(
                f, buf, self.len, idx as u16
            )
            .offset(offset)
            .build()),
            (IoOp::Read, false) => with_fd!(self.fixed_file, self.fd, |f| opcode::Read::new(
                f, buf, self.len
            )
            .offset(offset)
            .build()),
            (_, true) => with_fd!(self.fixed_file, self.fd, |f| opcode::WriteFixed::new(
                f, buf, self.len, idx as u16
            )
            .offset(offset)
            .build()),
            (_, false) => with_fd!(self.fixed_file, self.fd, |f| opcode::Write::new(
                f, buf, self.len
            )
            .offset(offset)
            .build()),
        };
        e.user_data(idx as u64)
    }

    fn sync_entry(&self, kind: SyncKind) -> squeue::Entry {
        let flags = if kind == SyncKind::Fdatasync {
            types::FsyncFlags::DATASYNC
        } else {
            types::FsyncFlags::empty()
        };
        with_fd!(self.fixed_file, self.fd, |f| opcode::Fsync::new(f)
            .flags(flags)
            .build())
        .user_data(SYNC_TAG)
    }
}

fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY)
    )
}

/// The engine's bookkeeping of slots in flight.
struct Flight {
    slots: Vec<Slot>,
    free: Vec<u32>,
    inflight: usize,
    stopping: bool,
    err: Option<EngineError>,
}

impl Flight {
    /// Takes every completion the CQ holds, stamped `now` (the time the enter that made them
    /// visible returned). Returns how many were reaped.
    #[inline]
    fn reap(
        &mut self,
        cq: &mut io_uring::CompletionQueue<'_>,
        ctx: &mut WorkerCtx<'_>,
        bs: usize,
        now: u64,
    ) -> usize {
        cq.sync();
        let mut n = 0;
        for cqe in &mut *cq {
            let i = cqe.user_data() as usize;
            let res = cqe.result();
            let Some(s) = self.slots.get(i).copied() else {
                continue;
            };
            n += 1;
            let what = if s.op == IoOp::Read { "read" } else { "write" };
            if res < 0 {
                self.err
                    .get_or_insert(ctx.io_error(what, std::io::Error::from_raw_os_error(-res)));
                self.stopping = true;
            } else if res as usize != bs {
                self.err.get_or_insert(ctx.io_error(
                    what,
                    std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("short {what}: {res} of {bs} bytes at offset {}", s.offset),
                    ),
                ));
                self.stopping = true;
            } else {
                ctx.rec.complete(s.op, s.offset, ctx.bs, s.t, now);
            }
            self.free.push(i as u32);
            self.inflight -= 1;
        }
        // Hand the reaped entries back to the kernel.
        cq.sync();
        n
    }
}

impl IoBackend for UringEngine {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), EngineError> {
        let depth = ctx.iodepth.max(1) as usize;
        let bs = ctx.bs as usize;
        let stride = bs.div_ceil(ctx.align) * ctx.align;
        // The buffers are declared before the ring, so they are dropped after it: the kernel
        // never holds a registered buffer that is already freed.
        let mut mem = AlignedBuf::new(stride * depth, ctx.align.max(4096));
        Rng::new(ctx.seed).fill(mem.as_mut_slice());
        let base = mem.as_mut_slice().as_mut_ptr();
        let iovecs: Vec<libc::iovec> = (0..depth)
            .map(|i| libc::iovec {
                iov_base: base.wrapping_add(i * stride).cast(),
                iov_len: bs,
            })
            .collect();
        let mut ring = build_ring((depth as u32).next_power_of_two().max(2))
            .map_err(|e| ctx.io_error("io_uring_setup", e))?;
        let fd = ctx.file.as_raw_fd();
        let fixed_file = ring.submitter().register_files(&[fd]).is_ok();
        // Safety: every iovec points into `mem`, which is not moved, resized or freed until
        // after `ring` is dropped (declared earlier, dropped later), so the registered memory
        // stays valid for the ring's whole life.
        let fixed_bufs = depth <= u16::MAX as usize
            && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let setup = Setup {
            fixed_file,
            fixed_bufs,
            fd,
            len: bs as u32,
        };
        // One submitter, SQ and CQ for the whole run: the registered ring fd (Linux 5.18) saves
        // the kernel an fd lookup on every io_uring_enter, and is remembered by this submitter.
        let (mut submitter, mut sq, mut cq) = ring.split();
        let _ = submitter.register_ring_fd();

        // fio's iodepth_batch_submit: I/Os per submission, 0 meaning iodepth.
        let per_submit = match ctx.batch {
            0 => depth,
            b => (b as usize).min(depth),
        };
        let mut f = Flight {
            slots: vec![
                Slot {
                    op: IoOp::Read,
                    offset: 0,
                    t: 0
                };
                depth
            ],
            free: (0..depth as u32).rev().collect(),
            inflight: 0,
            stopping: false,
            err: None,
        };
        let (mut exhausted, mut sync_pending) = (false, false);
        let mut writes = 0u32;
        let mut now;

        loop {
            // Submit while slots are free, `per_submit` at a time. Each submission also runs
            // the completion work deferred to this thread (the ring's TASKRUN flag makes
            // `submit` pass GETEVENTS when there is some), so the CQ is current after it and
            // its slots are reused at once, without sleeping.
            let mut waited = false;
            while !f.stopping && !exhausted && !sync_pending && !f.free.is_empty() {
                sq.sync();
                // The submission time of this batch (reaping took some time since `now`).
                let t = now_ns();
                let mut n = 0;
                while n < per_submit {
                    let Some(i) = f.free.pop() else { break };
                    let Some((op, offset)) = ctx.plan.next_io() else {
                        f.free.push(i);
                        exhausted = true;
                        break;
                    };
                    f.slots[i as usize] = Slot { op, offset, t };
                    let e = setup.entry(op, iovecs[i as usize].iov_base.cast(), offset, i);
                    // Safety: slot `i` was on the free list, so its buffer is not in use by
                    // any other request until this one completes; the buffer lives in `mem`
                    // and the fd in `ctx.file`, both of which outlive the ring. The SQ has
                    // room: it holds at least `depth` entries and at most `depth` are queued.
                    if unsafe { sq.push(&e) }.is_err() {
                        // Cannot happen (see above); give the slot back rather than lose it.
                        f.free.push(i);
                        break;
                    }
                    n += 1;
                    if op == IoOp::Write && ctx.sync_every > 0 {
                        writes += 1;
                        if writes >= ctx.sync_every {
                            writes = 0;
                            sync_pending = true;
                            break;
                        }
                    }
                }
                sq.sync();
                if n == 0 {
                    break;
                }
                f.inflight += n;
                // When this batch takes the last free slot (or is the plan's last, or a sync
                // must follow), there is nothing to do but wait: the same call waits for one
                // completion (one system call per I/O at iodepth 1).
                waited = f.free.is_empty() || exhausted || sync_pending;
                let r = if waited {
                    submitter.submit_and_wait(1)
                } else {
                    submitter.submit()
                };
                if let Err(e) = r {
                    waited = false;
                    if !transient(&e) {
                        f.err.get_or_insert(ctx.io_error("io_uring_enter", e));
                        f.stopping = true;
                    }
                }
                now = now_ns();
                f.reap(&mut cq, ctx, bs, now);
                if !ctx.rec.tick(now) {
                    f.stopping = true;
                }
            }
            if f.inflight == 0 {
                if sync_pending && !f.stopping {
                    sync_pending = false;
                    let e = setup.sync_entry(ctx.sync);
                    let t0 = now_ns();
                    sq.sync();
                    // Safety: a sync entry references no memory, only the fd that outlives the ring.
                    if unsafe { sq.push(&e) }.is_err() {
                        return Err(ctx.io_error(
                            sync_name(ctx.sync),
                            std::io::Error::other("submission queue full"),
                        ));
                    }
                    sq.sync();
                    let mut done = None;
                    while done.is_none() {
                        if let Err(e) = submitter.submit_and_wait(1) {
                            if !transient(&e) {
                                return Err(ctx.io_error("io_uring_enter", e));
                            }
                        }
                        cq.sync();
                        done = cq.next().map(|c| c.result());
                        cq.sync();
                    }
                    now = now_ns();
                    let res = done.unwrap_or(0);
                    if res < 0 {
                        return Err(ctx.io_error(
                            sync_name(ctx.sync),
                            std::io::Error::from_raw_os_error(-res),
                        ));
                    }
                    ctx.rec.sync_done(t0, now);
                    if !ctx.rec.tick(now) {
                        f.stopping = true;
                    }
                    continue;
                }
                if exhausted || f.stopping || f.free.is_empty() {
                    break;
                }
                continue;
            }
            if waited {
                // The last submission waited already.
                continue;
            }
            // Nothing more to submit: wait for one completion, as fio
            // (iodepth_batch_complete_min=1); waiting for more would save system calls but
            // stamp early completions late.
            if let Err(e) = submitter.submit_and_wait(1) {
                if !transient(&e) {
                    f.err.get_or_insert(ctx.io_error("io_uring_enter", e));
                    break;
                }
            }
            now = now_ns();
            f.reap(&mut cq, ctx, bs, now);
            if !ctx.rec.tick(now) {
                f.stopping = true;
            }
        }
        ctx.rec.finish();
        match f.err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
