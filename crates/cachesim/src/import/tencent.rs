//! Tencent CBS block traces (Zhang et al., ATC'20, SNIA IOTTA "Tencent Cloud Block Storage"),
//! one CSV line a request: `Timestamp,Offset,Size,IOType,VolumeID` with the timestamp in Unix
//! seconds, offset and size in 512-byte sectors and IOType 0 for a read, 1 for a write. The
//! stream is the volume id. One-second timestamps mean many requests share a time.

use super::{csv_fields, csv_request, id32, len32, num, scaled, LineParser, Parsed};
use crate::trace::Op;

pub(crate) struct Tencent;

impl LineParser for Tencent {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        let Some(f) = csv_fields(line, "Timestamp", 5, "Tencent CBS")? else {
            return Ok(Parsed::Skip);
        };
        let secs = num(f[0], "timestamp")?;
        let offset = num(f[1], "offset")?;
        let size = num(f[2], "size")?;
        let op = match f[3].trim() {
            "0" => Op::Read,
            "1" => Op::Write,
            o => return Err(format!("IO type {o:?} is not 0 (read) or 1 (write)")),
        };
        let vol = id32(f[4], "volume id")?;
        Ok(Parsed::Record(csv_request(
            scaled(secs, 1_000_000_000, "timestamp", "s")?,
            scaled(offset, 512, "offset", "sectors")?,
            len32(scaled(size, 512, "size", "sectors")?, "size")?,
            op,
            vol,
        )))
    }
    fn unix_ns(&self, t_ns: u64) -> Option<u64> {
        Some(t_ns)
    }
}
