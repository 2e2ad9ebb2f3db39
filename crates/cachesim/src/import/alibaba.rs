//! Alibaba cloud block traces (Li et al., IISWC'20, "alibaba_block_traces_2020"), one CSV line a
//! request: `device_id,opcode,offset,length,timestamp` with opcode `R`/`W`, offset and length in
//! bytes and the timestamp in microseconds. The stream is the device id.

use super::{csv_fields, len32, num, LineParser, Parsed};
use crate::trace::{Op, Record};

pub(crate) struct Alibaba;

impl LineParser for Alibaba {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        let Some(f) = csv_fields(line, "device_id", 5, "Alibaba")? else {
            return Ok(Parsed::Skip);
        };
        let dev = num(f[0], "device id")?;
        let op = match f[1].trim() {
            "R" | "r" => Op::Read,
            "W" | "w" => Op::Write,
            o => return Err(format!("opcode {o:?} is not R or W")),
        };
        let offset = num(f[2], "offset")?;
        let len = len32(num(f[3], "length")?, "length")?;
        let us = num(f[4], "timestamp")?;
        let mut r = Record::new(us.saturating_mul(1000), offset, len, op);
        r.stream = dev as u32;
        Ok(Parsed::Record(r))
    }
    fn unix_ns(&self, t_ns: u64) -> Option<u64> {
        Some(t_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{tests::parse_all, Format};
    use crate::trace::Op;

    #[test]
    fn parses_alibaba_lines() {
        let (rep, recs) = parse_all(
            Format::Alibaba,
            "419,W,8653837312,16384,1577808000000066\n419,R,8653837312,4096,1577808000000100\n",
        );
        assert_eq!((rep.records, rep.malformed), (2, 0));
        assert_eq!(
            (recs[0].op, recs[0].offset, recs[0].len, recs[0].stream),
            (Op::Write, 8653837312, 16384, 419)
        );
        assert_eq!(recs[1].t_ns, 34_000);
    }
}
