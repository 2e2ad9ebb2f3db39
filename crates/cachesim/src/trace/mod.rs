//! One block I/O request ([`Record`]) and the compact binary trace file that holds a stream of
//! them ([`Writer`], [`Reader`]); the byte layout is specified in `docs/trace.md`.

mod format;
pub mod volumes;

pub use format::{Header, Reader, Writer, FLAG_LATENCY, MAGIC, VERSION};
pub use volumes::{VolumeMap, Volumes};

use serde::Serialize;

/// The byte no request may reach: 2^63 - 1, the largest file or device offset Linux has
/// (`loff_t` is a signed 64-bit integer, `MAX_LFS_FILESIZE`). Within it every step between two
/// records' offsets fits the format's signed 64-bit delta exactly, so a delta that leaves the
/// range marks a corrupt file.
pub const MAX_END: u64 = i64::MAX as u64;

/// The most one read or write request may move: 64 MiB, above any device's request limit
/// (`max_hw_sectors_kb` in the kernel's Documentation/ABI/stable/sysfs-block; NVMe's MDTS and
/// SCSI's transfer limits are a few MiB). A longer record is a corrupt or hostile trace: the
/// simulators expand each request block by block, so this bounds the work per record.
pub const MAX_REQUEST_BYTES: u64 = 64 << 20;

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
    /// The byte after the request (saturating: [`Record::check`] refuses a range past
    /// [`MAX_END`]).
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.len as u64)
    }

    /// Whether the simulators may take this request: a read or write moves at most
    /// [`MAX_REQUEST_BYTES`] (each byte range is expanded block by block), and no range ends
    /// past [`MAX_END`]. Every importer and the trace reader call it, so no simulator sees more.
    pub fn check(&self) -> Result<(), String> {
        if self.op.is_data() && u64::from(self.len) > MAX_REQUEST_BYTES {
            return Err(format!(
                "a {} of {} bytes is longer than the {} MiB one block request may move",
                self.op.name(),
                self.len,
                MAX_REQUEST_BYTES >> 20
            ));
        }
        if self
            .offset
            .checked_add(u64::from(self.len))
            .is_none_or(|end| end > MAX_END)
        {
            return Err(format!(
                "offset {} + length {} ends past 2^63 - 1 bytes, the largest offset Linux addresses (loff_t is signed 64-bit)",
                self.offset, self.len
            ));
        }
        Ok(())
    }
    /// The blocks of size `block` this request touches (inclusive first, exclusive last).
    #[inline]
    pub fn blocks(&self, block: u64) -> std::ops::Range<u64> {
        if self.len == 0 {
            return 0..0;
        }
        let first = self.offset / block;
        let last = (self.end() - 1) / block;
        first..last + 1
    }
}

/// The most requests [`load`] holds in memory: 2^26 (64 Mi) records of 40 bytes, 2.5 GiB.
/// (`plan --trace` loads; `simulate` streams, see [`crate::stream`].)
pub const MAX_LOADED_RECORDS: usize = 1 << 26;

/// Reads every record of a trace file into memory (the planner's curve replays it once per
/// size it asks for), at most [`MAX_LOADED_RECORDS`], each volume of a multi-volume trace in
/// its own address space ([`volumes`]), as the caches are to see them.
pub fn load(path: &std::path::Path) -> Result<(Header, Vec<Record>, bool), crate::TraceError> {
    load_at_most(path, MAX_LOADED_RECORDS)
}

/// [`load`] with another bound (tests).
pub fn load_at_most(
    path: &std::path::Path,
    max: usize,
) -> Result<(Header, Vec<Record>, bool), crate::TraceError> {
    let mut r = Reader::open(path)?;
    let mut v = Vec::new();
    let mut volumes = VolumeMap::for_source(&r.header().source);
    for rec in &mut r {
        if v.len() >= max {
            return Err(crate::TraceError::Invalid {
                what: "trace",
                why: format!(
                    "{} has more than {max} requests, more than `plan --trace` holds in memory (docs/trace.md): plan from a part of it (trace import of fewer lines), or ask `simulate`, which streams",
                    path.display()
                ),
            });
        }
        let mut rec = rec?;
        volumes.map(&mut rec)?;
        v.push(rec);
    }
    let truncated = r.truncated();
    Ok((r.header().clone(), v, truncated))
}
