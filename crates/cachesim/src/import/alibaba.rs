//! Alibaba cloud block traces (Li et al., IISWC'20, "alibaba_block_traces_2020"), one CSV line a
//! request: `device_id,opcode,offset,length,timestamp` with opcode `R`/`W`, offset and length in
//! bytes and the timestamp in microseconds. The stream is the device id.

use super::{csv_fields, csv_request, id32, len32, num, scaled, LineParser, Parsed};
use crate::trace::Op;

pub(crate) struct Alibaba;

impl LineParser for Alibaba {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        let Some(f) = csv_fields(line, "device_id", 5, "Alibaba")? else {
            return Ok(Parsed::Skip);
        };
        let dev = id32(f[0], "device id")?;
        let op = match f[1].trim() {
            "R" | "r" => Op::Read,
            "W" | "w" => Op::Write,
            o => return Err(format!("opcode {o:?} is not R or W")),
        };
        let offset = num(f[2], "offset")?;
        let len = len32(num(f[3], "length")?, "length")?;
        let us = num(f[4], "timestamp")?;
        Ok(Parsed::Record(csv_request(
            scaled(us, 1000, "timestamp", "µs")?,
            offset,
            len,
            op,
            dev,
        )))
    }
    fn unix_ns(&self, t_ns: u64) -> Option<u64> {
        Some(t_ns)
    }
}
