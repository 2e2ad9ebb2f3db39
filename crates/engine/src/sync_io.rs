//! The synchronous backends, one I/O at a time as fio's: `psync` (pread/pwrite) and `sync`
//! (lseek + read/write, skipping the lseek when the file position is already right, as fio's
//! sync engine does). fsync/fdatasync after every N writes, timed on their own.

use crate::error::EngineError;
use crate::plan::{now_ns, Rng};
use crate::types::IoOp;
use crate::worker::{AlignedBuf, IoBackend, SyncKind, WorkerCtx};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

/// `psync` when `positional`, `sync` otherwise.
pub struct SyncEngine {
    pub positional: bool,
}

impl IoBackend for SyncEngine {
    fn run(&mut self, ctx: &mut WorkerCtx<'_>) -> Result<(), EngineError> {
        let bs = ctx.bs as usize;
        let mut buf = AlignedBuf::new(bs, ctx.align);
        Rng::new(ctx.seed).fill(buf.as_mut_slice());
        let mut file = ctx.file;
        // Where the file position is, for the sync engine (unknown at first).
        let mut pos = u64::MAX;
        let mut writes = 0u32;
        while let Some((op, offset)) = ctx.plan.next_io() {
            let t0 = now_ns();
            let r = match (op, self.positional) {
                (IoOp::Read, true) => file.read_exact_at(buf.as_mut_slice(), offset),
                (_, true) => file.write_all_at(buf.as_slice(), offset),
                (_, false) => {
                    let mut r = Ok(());
                    if pos != offset {
                        r = file.seek(SeekFrom::Start(offset)).map(|_| ());
                    }
                    r.and_then(|_| match op {
                        IoOp::Read => file.read_exact(buf.as_mut_slice()),
                        _ => file.write_all(buf.as_slice()),
                    })
                }
            };
            let t1 = now_ns();
            if let Err(e) = r {
                return Err(ctx.io_error(if op == IoOp::Read { "read" } else { "write" }, e));
            }
            pos = offset + ctx.bs;
            ctx.rec.complete(op, offset, ctx.bs, t0, t1);
            let mut last = t1;
            if op == IoOp::Write && ctx.sync_every > 0 {
                writes += 1;
                if writes >= ctx.sync_every {
                    writes = 0;
                    let s0 = now_ns();
                    let r = match ctx.sync {
                        SyncKind::Fdatasync => file.sync_data(),
                        SyncKind::Fsync => file.sync_all(),
                        SyncKind::None => Ok(()),
                    };
                    let s1 = now_ns();
                    r.map_err(|e| ctx.io_error(sync_name(ctx.sync), e))?;
                    ctx.rec.sync_done(s0, s1);
                    last = s1;
                }
            }
            if !ctx.rec.tick(last) {
                break;
            }
        }
        ctx.rec.finish();
        Ok(())
    }
}

pub fn sync_name(k: SyncKind) -> &'static str {
    match k {
        SyncKind::Fdatasync => "fdatasync",
        SyncKind::Fsync => "fsync",
        SyncKind::None => "sync",
    }
}
