//! MSR Cambridge block traces (SNIA IOTTA, Narayanan et al., FAST'08), one CSV line a request:
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` with the timestamp in Windows
//! filetime (100 ns ticks since 1601-01-01), Type `Read`/`Write`, offset and size in bytes and
//! the response time in 100 ns ticks. The stream is the disk number.

use super::{csv_fields, csv_request, id32, len32, num, scaled, LineParser, Parsed};
use crate::trace::Op;

pub(crate) struct Msr;

/// 100 ns ticks between 1601-01-01 and 1970-01-01 (the Windows FILETIME epoch offset).
const FILETIME_UNIX_OFFSET_TICKS: u64 = 116_444_736_000_000_000;

impl LineParser for Msr {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        let Some(f) = csv_fields(line, "Timestamp", 7, "MSR")? else {
            return Ok(Parsed::Skip);
        };
        let ticks = num(f[0], "timestamp")?;
        let disk = id32(f[2], "disk number")?;
        let op = match f[3].trim() {
            t if t.eq_ignore_ascii_case("read") => Op::Read,
            t if t.eq_ignore_ascii_case("write") => Op::Write,
            t => return Err(format!("type {t:?} is not Read or Write")),
        };
        let offset = num(f[4], "offset")?;
        let size = len32(num(f[5], "size")?, "size")?;
        let resp = num(f[6], "response time")?;
        let t_ns = scaled(ticks, 100, "timestamp", "100-ns ticks")?;
        let mut r = csv_request(t_ns, offset, size, op, disk);
        r.latency_ns = scaled(resp, 100, "response time", "100-ns ticks")?;
        Ok(Parsed::Record(r))
    }
    fn unix_ns(&self, t_ns: u64) -> Option<u64> {
        t_ns.checked_sub(FILETIME_UNIX_OFFSET_TICKS * 100)
    }
}
