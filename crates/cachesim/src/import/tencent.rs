//! Tencent CBS block traces (Zhang et al., ATC'20, SNIA IOTTA "Tencent Cloud Block Storage"),
//! one CSV line a request: `Timestamp,Offset,Size,IOType,VolumeID` with the timestamp in Unix
//! seconds, offset and size in 512-byte sectors and IOType 0 for a read, 1 for a write. The
//! stream is the volume id. One-second timestamps mean many requests share a time.

use super::{csv_fields, len32, num, LineParser, Parsed};
use crate::trace::{Op, Record};

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
        let vol = num(f[4], "volume id")?;
        let mut r = Record::new(
            secs.saturating_mul(1_000_000_000),
            offset.saturating_mul(512),
            len32(size.saturating_mul(512), "size")?,
            op,
        );
        r.stream = vol as u32;
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
    fn parses_tencent_lines() {
        let (_, recs) = parse_all(
            Format::Tencent,
            "1538323200,12345,8,1,1063\n1538323201,12345,8,0,1063\n",
        );
        assert_eq!(
            (recs[0].op, recs[0].offset, recs[0].len, recs[0].stream),
            (Op::Write, 12345 * 512, 4096, 1063)
        );
        assert_eq!((recs[1].op, recs[1].t_ns), (Op::Read, 1_000_000_000));
    }
}
