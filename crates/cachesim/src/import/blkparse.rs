//! blkparse's default text output (blktrace(8), blkparse(1) "default output format"):
//!
//! ```text
//! 8,0    3        1     0.000000000   697  Q  WS 1234567 + 8 [kworker/3:1]
//! dev    cpu      seq   time(s)       pid  action rwbs sector + sectors [process]
//! ```
//!
//! Only `Q` (queued) events become records: a queue event is the request as the submitter
//! issued it, once, before the scheduler merges or splits it; `C` (complete) would see merged
//! requests and double-count nothing, but loses the submitter's pattern, so disktier uses `Q`
//! consistently and skips every other action. RWBS: `D` discard, `W` write, `R` read, `F`
//! flush without data becomes a sync; `S`/`F` mark the request synchronous. The stream is
//! the pid. The per-CPU and total summaries at the end are skipped.

use super::{id32, len32, num, scaled, LineParser, Parsed};
use crate::trace::{Op, Record};

#[derive(Default)]
pub(crate) struct Blkparse {
    in_summary: bool,
    /// The device (major, minor) of the first queue event: a trace is of one device.
    device: Option<(u64, u64)>,
}

/// Parses "12.345678901" seconds into nanoseconds without going through f64.
fn seconds_ns(s: &str) -> Result<u64, String> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    // The whole seconds' error named the field "not a non-negative integer", which a time
    // with a fraction never is (QA: `-1.000000000`, `1e3`, `nan`).
    let not_time = || format!("time {s:?} is not seconds.nanoseconds");
    let w = num(whole, "time").map_err(|_| not_time())?;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_time());
    }
    let mut f: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| format!("time {s:?}"))?
    };
    for _ in frac.len()..9 {
        f *= 10;
    }
    w.checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(f))
        .ok_or_else(|| format!("time {s:?} is past 2^64 ns"))
}

impl LineParser for Blkparse {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        let t = line.trim();
        if t.is_empty() || self.in_summary {
            return Ok(Parsed::Skip);
        }
        // The summary starts with "CPU0 (8,0):" or "Total (8,0):" and runs to the end.
        if t.starts_with("CPU") || t.starts_with("Total") || t.starts_with("Throughput") {
            self.in_summary = true;
            return Ok(Parsed::Skip);
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        if f.len() < 7 {
            return Err(format!(
                "{} fields, a blkparse event has at least 7",
                f.len()
            ));
        }
        let dev = f[0];
        let Some((maj, min)) = dev.split_once(',') else {
            return Err(format!("device {dev:?} is not major,minor"));
        };
        let dev_id = (num(maj, "device major")?, num(min, "device minor")?);
        let t_ns = seconds_ns(f[3])?;
        let pid = id32(f[4], "pid")?;
        let action = f[5];
        if action != "Q" {
            return Ok(Parsed::Skip);
        }
        // blkparse merges the events of every device it is given (`blktrace -d /dev/sda -d
        // /dev/sdb`), but a trace is one device's address space: sector 2048 of sdb is not
        // sector 2048 of sda, and both went into one trace as the same block (QA: two devices
        // reading the same sectors showed 50 % reuse and half their footprint).
        let first = *self.device.get_or_insert(dev_id);
        if dev_id != first {
            return Err(format!(
                "device {dev} is not {},{}, the device of the first event: a trace holds one device's blocks, so import each device's events alone (`blkparse -i sdX`, or keep its lines: `grep '^ *{dev} '`)",
                first.0, first.1
            ));
        }
        let rwbs = f[6];
        if !rwbs.bytes().all(|b| b"RWDFNSMAEBT".contains(&b)) {
            return Err(format!("RWBS field {rwbs:?} has unknown letters"));
        }
        let (sector, sectors) = if f.len() >= 10 && f[8] == "+" {
            (num(f[7], "sector")?, num(f[9], "sector count")?)
        } else if f.len() >= 8 && f[7].starts_with('[') || f.len() == 7 {
            // A pure flush: "Q FN [proc]" carries no sector.
            (0, 0)
        } else {
            return Err("expected `sector + count` after RWBS".to_string());
        };
        let op = if rwbs.contains('D') {
            Op::Discard
        } else if rwbs.contains('F') && sectors == 0 {
            // A preflush without data ("FWS 0 + 0"): an fsync reaching the device.
            Op::Sync
        } else if rwbs.contains('W') {
            Op::Write
        } else if rwbs.contains('R') {
            Op::Read
        } else if rwbs.contains('F') {
            Op::Sync
        } else {
            // "N": a request without data and without a flush (e.g. a zone op): nothing to cache.
            return Ok(Parsed::Skip);
        };
        let len = if op == Op::Sync && sectors == 0 {
            0
        } else {
            len32(scaled(sectors, 512, "length", "sectors")?, "length")?
        };
        let offset = sector
            .checked_mul(512)
            .ok_or_else(|| format!("sector {sector} is past 2^64 bytes"))?;
        let mut r = Record::new(t_ns, offset, len, op);
        r.sync = rwbs.contains('S') || rwbs.contains('F');
        r.stream = pid;
        Ok(Parsed::Record(r))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{tests::parse_all, Format};
    use crate::trace::Op;

    #[test]
    fn queue_events_only_with_ops_and_streams() {
        let text = "\
  8,0    3        1     0.000000000   697  Q  WS 1234567 + 8 [kworker/3:1]
  8,0    3        2     0.000001000   697  G  WS 1234567 + 8 [kworker/3:1]
  8,0    3        3     0.000050000   697  C  WS 1234567 + 8 [0]
  8,0    1        4     0.100000000   812  Q   R 2048 + 256 [postgres]
  8,0    1        5     0.200000000   812  Q  FWS 0 + 0 [postgres]
  8,0    0        6     0.300000000   900  Q   D 4096 + 2048 [fstrim]
CPU0 (8,0):
 Reads Queued:           1,      128KiB  Writes Queued:           1,        4KiB
Total (8,0):
";
        let (rep, recs) = parse_all(Format::Blkparse, text);
        assert_eq!(rep.malformed, 0);
        assert_eq!(recs.len(), 4);
        assert_eq!(
            (
                recs[0].op,
                recs[0].offset,
                recs[0].len,
                recs[0].sync,
                recs[0].stream
            ),
            (Op::Write, 1234567 * 512, 4096, true, 697)
        );
        assert_eq!(
            (recs[1].op, recs[1].offset, recs[1].len, recs[1].t_ns),
            (Op::Read, 2048 * 512, 128 * 1024, 100_000_000)
        );
        // "FWS 0 + 0" carries no data: a flush, recorded as a sync
        assert_eq!((recs[2].op, recs[2].len, recs[2].sync), (Op::Sync, 0, true));
        assert_eq!((recs[3].op, recs[3].len), (Op::Discard, 2048 * 512));
    }

    /// Regression (QA): blkparse's output of two devices (`blktrace -d /dev/sda -d /dev/sdb`)
    /// went into one trace, their equal sectors as the same blocks: two devices reading the
    /// same two sectors showed 50 % reuse. Queue events of a device other than the first are
    /// malformed lines, naming how to import each device alone; other events of it are skipped
    /// as ever.
    #[test]
    fn the_events_of_a_second_device_are_not_mixed_in() {
        let text = "\
  8,0    0        1     0.000000000   100  Q   R 2048 + 8 [a]
  8,16   1        1     0.000001000   200  Q   R 2048 + 8 [b]
  8,16   1        2     0.000001500   200  C   R 2048 + 8 [0]
  8,0    0        2     0.000002000   100  Q   R 4096 + 8 [a]
";
        let (rep, recs) = parse_all(Format::Blkparse, text);
        assert_eq!((rep.records, rep.malformed, rep.skipped), (2, 1, 1));
        assert_eq!(rep.first_malformed, vec![2]);
        assert!(recs.iter().all(|r| r.stream == 100));
        let mut p = super::Blkparse::default();
        let _ = super::super::LineParser::parse(&mut p, text.lines().next().unwrap());
        let Err(e) = super::super::LineParser::parse(&mut p, text.lines().nth(1).unwrap()) else {
            panic!("a second device's queue event is malformed")
        };
        assert_eq!(
            e,
            "device 8,16 is not 8,0, the device of the first event: a trace holds one device's blocks, so import each device's events alone (`blkparse -i sdX`, or keep its lines: `grep '^ *8,16 '`)"
        );
    }

    /// Regression (QA): a time that is not seconds.nanoseconds was called "not a non-negative
    /// integer" when its whole seconds were wrong, though blkparse's times have a fraction.
    #[test]
    fn a_bad_time_is_named_as_seconds() {
        for t in ["-1.000000000", "1e3", "nan", ".5", "1.5x", "1.0000000001"] {
            assert_eq!(
                super::seconds_ns(t).unwrap_err(),
                format!("time {t:?} is not seconds.nanoseconds")
            );
        }
        assert_eq!(super::seconds_ns("12.5"), Ok(12_500_000_000));
        assert_eq!(super::seconds_ns("7"), Ok(7_000_000_000));
    }
}
