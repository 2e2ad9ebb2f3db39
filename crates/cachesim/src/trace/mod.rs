//! One block I/O request ([`Record`]) and the compact binary trace file that holds a stream of
//! them ([`Writer`], [`Reader`]); the byte layout is specified in `docs/trace.md`.

mod format;

pub use format::{Header, Reader, Writer, FLAG_LATENCY, MAGIC, VERSION};

use serde::Serialize;

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read = 0,
    Write = 1,
    /// A flush / fsync / fdatasync: no data, orders what came before.
    Sync = 2,
    /// A discard / trim: the range's data is no longer needed.
    Discard = 3,
}

impl Op {
    pub fn from_bits(b: u8) -> Op {
        match b & 3 {
            0 => Op::Read,
            1 => Op::Write,
            2 => Op::Sync,
            _ => Op::Discard,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Sync => "sync",
            Op::Discard => "discard",
        }
    }
    /// Reads and writes move data through a cache; syncs and discards do not.
    pub fn is_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }
}

/// One request as issued to a block device or file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Nanoseconds since the trace's start time.
    pub t_ns: u64,
    /// Byte offset.
    pub offset: u64,
    /// Length in bytes (0 for a flush).
    pub len: u32,
    pub op: Op,
    /// The request carried REQ_SYNC / FUA (blkparse's `S` or `F`): bcache lets such writes use
    /// writeback up to the 70 % cutoff instead of 40 %.
    pub sync: bool,
    /// Who issued it: a process id (blkparse), disk number (MSR), device or volume id
    /// (Alibaba, Tencent), file index (fio iolog), job thread (disktier's engine).
    pub stream: u32,
    /// Completion latency in nanoseconds when the source measured it (0 when unknown).
    pub latency_ns: u64,
}

impl Record {
    pub fn new(t_ns: u64, offset: u64, len: u32, op: Op) -> Record {
        Record {
            t_ns,
            offset,
            len,
            op,
            sync: false,
            stream: 0,
            latency_ns: 0,
        }
    }
    pub fn end(&self) -> u64 {
        self.offset + self.len as u64
    }
    /// The blocks of size `block` this request touches (inclusive first, exclusive last).
    #[inline]
    pub fn blocks(&self, block: u64) -> std::ops::Range<u64> {
        if self.len == 0 {
            return 0..0;
        }
        let first = self.offset / block;
        let last = (self.offset + self.len as u64 - 1) / block;
        first..last + 1
    }
}

/// Reads every record of a trace file into memory (the simulator replays it many times).
pub fn load(path: &std::path::Path) -> Result<(Header, Vec<Record>, bool), crate::TraceError> {
    let mut r = Reader::open(path)?;
    let mut v = Vec::new();
    for rec in &mut r {
        v.push(rec?);
    }
    let truncated = r.truncated();
    Ok((r.header().clone(), v, truncated))
}
