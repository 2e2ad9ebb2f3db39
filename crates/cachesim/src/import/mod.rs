//! Streaming importers from public trace formats into `DTTRACE`: one parser per format, each
//! turning a text line into at most one [`Record`]; this module opens the input (gzip and
//! zstd detected by their magic bytes), counts malformed lines and writes the trace.

mod alibaba;
mod blkparse;
mod fio_iolog;
mod msr;
mod tencent;
mod to_file;

pub use to_file::import_to_file;

use crate::trace::{Header, Op, Record, Writer};
use crate::TraceError;
use serde::Serialize;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// The formats `disktier trace import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    Blkparse,
    Msr,
    Alibaba,
    Tencent,
    FioIolog,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::Blkparse,
        Format::Msr,
        Format::Alibaba,
        Format::Tencent,
        Format::FioIolog,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Format::Blkparse => "blkparse",
            Format::Msr => "msr",
            Format::Alibaba => "alibaba",
            Format::Tencent => "tencent",
            Format::FioIolog => "fio-iolog",
        }
    }
    pub fn from_name(s: &str) -> Result<Format, TraceError> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| TraceError::UnknownFormat(s.to_string()))
    }
    fn parser(self) -> Box<dyn LineParser> {
        match self {
            Format::Blkparse => Box::new(blkparse::Blkparse::default()),
            Format::Msr => Box::new(msr::Msr),
            Format::Alibaba => Box::new(alibaba::Alibaba),
            Format::Tencent => Box::new(tencent::Tencent),
            Format::FioIolog => Box::new(fio_iolog::FioIolog::default()),
        }
    }
}

/// What one line turned into.
pub(crate) enum Parsed {
    /// A request; `t_ns` is absolute in the format's own clock (made relative by the driver).
    Record(Record),
    /// A header, comment, summary or an event the importer deliberately ignores.
    Skip,
}

/// One format's line parser; `Err` is a human-readable reason the line is malformed.
pub(crate) trait LineParser {
    fn parse(&mut self, line: &str) -> Result<Parsed, String>;
    /// Nanoseconds since the Unix epoch of a format timestamp, when the clock is absolute.
    fn unix_ns(&self, _t_ns: u64) -> Option<u64> {
        None
    }
}

/// The outcome of an import.
#[derive(Debug, Clone, Serialize)]
pub struct ImportReport {
    pub format: Format,
    /// Lossily (U+FFFD for bytes that are not UTF-8): serde refuses such a path.
    #[serde(serialize_with = "lossy_path")]
    pub input: PathBuf,
    pub compression: &'static str,
    pub lines: u64,
    pub records: u64,
    pub skipped: u64,
    pub malformed: u64,
    /// Line numbers (1-based) of the first malformed lines, at most [`FIRST_MALFORMED`].
    pub first_malformed: Vec<u64>,
    /// Records whose time was before the first record's (clamped to 0).
    pub out_of_order: u64,
}

pub const FIRST_MALFORMED: usize = 5;

/// Opens a file, undoing gzip or zstd compression when its first bytes say so.
pub fn open_maybe_compressed(path: &Path) -> Result<(Box<dyn BufRead>, &'static str), TraceError> {
    let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
    decompress(f).map_err(|e| TraceError::io(path, e))
}

/// Reads `input` plain, or through gzip or zstd when its first bytes are their magic.
pub fn decompress<R: Read + 'static>(
    mut f: R,
) -> std::io::Result<(Box<dyn BufRead>, &'static str)> {
    let mut magic = [0u8; 4];
    let mut n = 0;
    while n < 4 {
        let k = f.read(&mut magic[n..])?;
        if k == 0 {
            break;
        }
        n += k;
    }
    let head = std::io::Cursor::new(magic[..n].to_vec());
    let chained = head.chain(f);
    if n >= 2 && magic[..2] == [0x1f, 0x8b] {
        let d = flate2::read::MultiGzDecoder::new(chained);
        Ok((Box::new(BufReader::with_capacity(1 << 16, d)), "gzip"))
    } else if n >= 4 && magic == [0x28, 0xb5, 0x2f, 0xfd] {
        let d = zstd::stream::read::Decoder::new(chained)?;
        Ok((Box::new(BufReader::with_capacity(1 << 16, d)), "zstd"))
    } else {
        Ok((Box::new(BufReader::with_capacity(1 << 16, chained)), "none"))
    }
}

pub fn import<W: Write>(
    format: Format,
    input: &Path,
    out: W,
    strict: bool,
) -> Result<(ImportReport, W), TraceError> {
    let f = File::open(input).map_err(|e| TraceError::io(input, e))?;
    import_reader(format, f, input, out, strict)
}

/// [`import`] from any reader (plain, gzip or zstd); `input` names it in messages.
pub fn import_reader<R: Read + 'static, W: Write>(
    format: Format,
    reader: R,
    input: &Path,
    out: W,
    strict: bool,
) -> Result<(ImportReport, W), TraceError> {
    let (mut rd, compression) = decompress(reader).map_err(|e| TraceError::io(input, e))?;
    let mut parser = format.parser();
    let mut report = ImportReport {
        format,
        input: input.to_path_buf(),
        compression,
        lines: 0,
        records: 0,
        skipped: 0,
        malformed: 0,
        first_malformed: Vec::new(),
        out_of_order: 0,
    };
    // The header needs the start time, known only at the first record: buffer until then.
    let mut writer: Option<Writer<W>> = None;
    let mut out = Some(out);
    let mut t0: Option<u64> = None;
    // Why the first malformed line was refused, for an import that finds no record at all.
    let mut first_why: Option<String> = None;
    // Whether the import stopped at MALFORMED_BEFORE_ANY malformed lines, before the end.
    let mut gave_up = false;
    let mut buf = Vec::with_capacity(256);
    while let Some(whole) =
        read_line_capped(&mut rd, &mut buf).map_err(|e| TraceError::io(input, e))?
    {
        report.lines += 1;
        let parsed = if !whole {
            Err(format!(
                "line longer than {MAX_LINE} bytes, which no trace format has"
            ))
        } else {
            match std::str::from_utf8(&buf) {
                // A UTF-8 byte order mark (a CSV saved by Excel or Windows PowerShell) is no
                // part of the first line: it made its header, or its first record, malformed.
                Ok(s) if report.lines == 1 => parser.parse(
                    s.strip_prefix('\u{feff}')
                        .unwrap_or(s)
                        .trim_end_matches(['\n', '\r']),
                ),
                Ok(s) => parser.parse(s.trim_end_matches(['\n', '\r'])),
                Err(_) => Err("not UTF-8 text".to_string()),
            }
        }
        .and_then(|p| match p {
            Parsed::Record(r) => r.check().map(|()| Parsed::Record(r)),
            skip => Ok(skip),
        })
        .and_then(|p| match (&p, t0) {
            // The trace stores each time as a signed step from the previous one.
            (Parsed::Record(r), Some(base)) if r.t_ns.saturating_sub(base) > MAX_TIME_NS => {
                Err(format!(
                    "its time is {} s after the first record's, past the {} s (292 years) a trace can span",
                    (r.t_ns - base) / 1_000_000_000,
                    MAX_TIME_NS / 1_000_000_000
                ))
            }
            _ => Ok(p),
        });
        match parsed {
            Ok(Parsed::Skip) => report.skipped += 1,
            Ok(Parsed::Record(mut r)) => {
                let base = *t0.get_or_insert(r.t_ns);
                if writer.is_none() {
                    let start = parser.unix_ns(base).unwrap_or(0);
                    let header = Header::new(format.name(), start, 0);
                    writer = Some(Writer::new(out.take().expect("output"), &header)?);
                }
                if r.t_ns < base {
                    report.out_of_order += 1;
                    r.t_ns = 0;
                } else {
                    r.t_ns -= base;
                }
                writer.as_mut().expect("writer").write(&r)?;
                report.records += 1;
            }
            Err(why) => {
                if strict {
                    return Err(TraceError::Malformed {
                        path: input.to_path_buf(),
                        format: format.name(),
                        line: report.lines,
                        why,
                    });
                }
                report.malformed += 1;
                first_why.get_or_insert(why);
                if report.records == 0 && report.malformed >= MALFORMED_BEFORE_ANY {
                    gave_up = true;
                    break;
                }
                if report.first_malformed.len() < FIRST_MALFORMED {
                    report.first_malformed.push(report.lines);
                }
            }
        }
    }
    match writer {
        Some(w) => Ok((report, w.finish()?)),
        None => {
            let why = match &first_why {
                _ if report.lines == 0 => "the file is empty".to_string(),
                None => format!(
                    "its {} line(s) are all headers, comments or events the {} importer skips",
                    report.lines,
                    format.name()
                ),
                // The input was not read to its end: its line count is unknown (QA: 'of 10000
                // lines' was said of a file of 10005, whose last five were records).
                Some(w) if gave_up => format!(
                    "its first {} lines are malformed, the first (line {}) because {w}, so the rest was not read (an input with no record in its first {MALFORMED_BEFORE_ANY} lines is taken for another format); check the format name",
                    report.malformed,
                    report.first_malformed.first().copied().unwrap_or(0)
                ),
                Some(w) => format!(
                    "{} of {} lines are malformed, the first (line {}) because {w}; check the format name",
                    report.malformed,
                    report.lines,
                    report.first_malformed.first().copied().unwrap_or(0)
                ),
            };
            Err(TraceError::Empty {
                path: input.to_path_buf(),
                format: format.name(),
                malformed: report.malformed,
                first: report.first_malformed,
                why,
            })
        }
    }
}

/// The latest time a trace's record can have, in ns from its first: 2^63 - 1 (292 years), so
/// that every step between two records fits the format's signed 64-bit delta.
pub const MAX_TIME_NS: u64 = i64::MAX as u64;

/// The longest line an importer reads (the longest real lines, blkparse's with a long process
/// name, are under 200 bytes).
pub const MAX_LINE: usize = 4096;

/// The most bytes of one overlong line that are read through before the input is refused.
pub const MAX_DROPPED: usize = 1 << 20;

/// Malformed lines before the first record after which the input is taken for another format
/// (or no trace at all, as /dev/urandom) and the import stops.
pub const MALFORMED_BEFORE_ANY: u64 = 10_000;

/// Reads one line into `buf` (cleared first), keeping at most [`MAX_LINE`] bytes: the rest of a
/// longer line is read and dropped, so memory stays bounded whatever the input. `None` at the
/// end; `Some(false)` for a line that was too long.
pub(crate) fn read_line_capped<R: BufRead + ?Sized>(
    rd: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let n = (&mut *rd)
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() <= MAX_LINE || buf.last() == Some(&b'\n') {
        return Ok(Some(true));
    }
    // Drop the rest of the line, up to MAX_DROPPED: an endless line (/dev/zero) is no trace.
    let mut dropped = buf.len();
    loop {
        if dropped > MAX_DROPPED {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "a line longer than {} MiB: this is not a text trace",
                    MAX_DROPPED >> 20
                ),
            ));
        }
        let chunk = rd.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => {
                rd.consume(i + 1);
                break;
            }
            None => {
                let k = chunk.len();
                rd.consume(k);
                dropped += k;
            }
        }
    }
    buf.clear();
    Ok(Some(false))
}

/// The fields of one CSV line of a `format` trace, which has `n` of them; `None` for a line to
/// skip (blank, a `#` comment, or the header line, which starts with `header`).
pub(crate) fn csv_fields<'a>(
    line: &'a str,
    header: &str,
    n: usize,
    format: &str,
) -> Result<Option<Vec<&'a str>>, String> {
    if line.trim().is_empty() || line.starts_with(header) || line.starts_with('#') {
        return Ok(None);
    }
    let f: Vec<&str> = line.split(',').collect();
    if f.len() != n {
        return Err(format!("{} fields, {format} lines have {n}", f.len()));
    }
    Ok(Some(f))
}

/// The request of one CSV line, on `stream` (the line's device, disk or volume number, see
/// [`id32`]).
pub(crate) fn csv_request(t_ns: u64, offset: u64, len: u32, op: Op, stream: u32) -> Record {
    let mut r = Record::new(t_ns, offset, len, op);
    r.stream = stream;
    r
}

/// A stream id (device, disk or volume number, pid) as the format stores it, 32 bits. A larger
/// one is a malformed line: truncated, volume 2^32 + 1 would become volume 1 and share its
/// blocks.
pub(crate) fn id32(field: &str, what: &str) -> Result<u32, String> {
    let v = num(field, what)?;
    u32::try_from(v).map_err(|_| format!("{what} {v} is over {}", u32::MAX))
}

/// Parses an unsigned decimal field, naming it in the error.
pub(crate) fn num(field: &str, what: &str) -> Result<u64, String> {
    field
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("{what} {field:?} is not a non-negative integer"))
}

/// `v` (a field in `unit`s) times `per` (its size in the trace's unit: ns or bytes), or why
/// it is out of range: a timestamp or an offset that would pass 2^64 once converted is a
/// malformed line, not a figure saturated to 2^64 (QA: an Alibaba timestamp of 2^64 - 1 µs
/// made a trace "over 18446744073.710 s").
pub(crate) fn scaled(v: u64, per: u64, what: &str, unit: &str) -> Result<u64, String> {
    v.checked_mul(per).ok_or_else(|| {
        format!(
            "{what} {v} {unit} is out of range: it passes 2^64 {} once converted",
            if what.contains("time") { "ns" } else { "bytes" }
        )
    })
}

/// Parses a length that must fit the trace's 32-bit length field.
pub(crate) fn len32(v: u64, what: &str) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("{what} {v} is over 4 GiB"))
}

fn lossy_path<S: serde::Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Reader;

    /// [`import`] of a file holding `text`.
    fn import_text(
        format: Format,
        text: &str,
        strict: bool,
    ) -> Result<(ImportReport, Vec<u8>), TraceError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in");
        std::fs::write(&p, text).unwrap();
        import(format, &p, Vec::new(), strict)
    }

    pub(super) fn parse_all(format: Format, text: &str) -> (ImportReport, Vec<Record>) {
        let (rep, bytes) = import_text(format, text, false).unwrap();
        let recs = Reader::new(&bytes[..], "mem")
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        (rep, recs)
    }

    #[test]
    fn csv_formats_parse_their_lines() {
        // (format, two lines, the first's (op, offset, len, stream), the second's (op, time))
        let cases = [
            (
                Format::Msr,
                "128166372003061629,hm,1,Read,383496192,32768,41353\n128166372003071629,hm,1,Write,0,4096,100\n",
                (Op::Read, 383496192, 32768, 1),
                // 10000 ticks of 100 ns = 1 ms
                (Op::Write, 1_000_000),
            ),
            (
                Format::Alibaba,
                "419,W,8653837312,16384,1577808000000066\n419,R,8653837312,4096,1577808000000100\n",
                (Op::Write, 8653837312, 16384, 419),
                (Op::Read, 34_000),
            ),
            (
                Format::Tencent,
                "1538323200,12345,8,1,1063\n1538323201,12345,8,0,1063\n",
                (Op::Write, 12345 * 512, 4096, 1063),
                (Op::Read, 1_000_000_000),
            ),
        ];
        for (format, text, first, second) in cases {
            let (rep, recs) = parse_all(format, text);
            assert_eq!((rep.records, rep.malformed), (2, 0), "{format:?}");
            let r = &recs[0];
            assert_eq!((r.op, r.offset, r.len, r.stream), first, "{format:?}");
            assert_eq!((recs[1].op, recs[1].t_ns), second, "{format:?}");
        }
    }

    /// Regression (QA): a UTF-8 byte order mark before the first line (Excel's and Windows
    /// PowerShell's "UTF-8") made that line malformed: a header was counted as a malformed
    /// line (`--strict`: an error at line 1) and a first record was lost. It is dropped at the
    /// start of the input only.
    #[test]
    fn a_byte_order_mark_before_the_first_line_is_dropped() {
        let cases = [
            (Format::Msr, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n128166372003061629,hm,1,Read,383496192,32768,41353\n", 1),
            (Format::Msr, "128166372003061629,hm,1,Read,383496192,32768,41353\n", 1),
            (Format::Alibaba, "device_id,opcode,offset,length,timestamp\n419,W,8653837312,16384,1577808000000066\n", 1),
            (Format::Alibaba, "419,W,8653837312,16384,1577808000000066\n419,R,0,4096,1577808000000100\n", 2),
            (Format::Tencent, "Timestamp,Offset,Size,IOType,VolumeID\n1538323200,12345,8,1,1063\n", 1),
            (Format::FioIolog, "fio version 2 iolog\n/dev/sdb read 0 4096\n", 1),
            (Format::Blkparse, "  8,16   1        1     0.000000000  4162  Q  WS 2048 + 8 [postgres]\n", 1),
        ];
        for (format, text, records) in cases {
            let (rep, _) = import_text(format, &format!("\u{feff}{text}"), true)
                .unwrap_or_else(|e| panic!("{format:?}: {e}"));
            assert_eq!((rep.records, rep.malformed), (records, 0), "{format:?}");
        }
        // Only before the first line: one inside the file is still no number.
        let (rep, _) = import_text(
            Format::Alibaba,
            "419,W,0,4096,1\n\u{feff}419,R,0,4096,2\n",
            false,
        )
        .unwrap();
        assert_eq!((rep.records, rep.malformed), (1, 1));
    }

    #[test]
    fn format_names_round_trip() {
        for f in Format::ALL {
            assert_eq!(Format::from_name(f.name()).unwrap(), f);
        }
        assert!(Format::from_name("csv").is_err());
    }

    #[test]
    fn strict_fails_on_first_malformed_line_and_names_it() {
        let text = "1,R,0,4096,10\n1,R,zz,4096,11\n1,W,0,4096,12\n";
        let err = import_text(Format::Alibaba, text, true).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(":2:"), "{msg}");
        let (rep, _) = import_text(Format::Alibaba, text, false).unwrap();
        assert_eq!((rep.records, rep.malformed), (2, 1));
        assert_eq!(rep.first_malformed, vec![2]);
    }

    #[test]
    fn no_records_is_an_error_naming_the_format() {
        let err = import_text(Format::Msr, "garbage\nmore garbage\n", false).unwrap_err();
        assert!(err.to_string().contains("no valid msr records"), "{err}");
    }

    /// Regression (QA): an input whose first 10,000 lines were malformed was given up on there
    /// (as no trace of this format), and the error said '10000 of 10000 lines are malformed'
    /// of a file of 10,005 lines, whose last five were records: it now says the rest was not
    /// read, and why.
    #[test]
    fn an_input_given_up_on_does_not_claim_its_line_count() {
        let mut text = "garbage\n".repeat(MALFORMED_BEFORE_ANY as usize);
        text.push_str(&"1,R,0,4096,1\n".repeat(5));
        let e = import_text(Format::Alibaba, &text, false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("its first 10000 lines are malformed, the first (line 1) because 1 fields, Alibaba lines have 5, so the rest was not read (an input with no record in its first 10000 lines is taken for another format)"),
            "{e}"
        );
        assert!(!e.contains("of 10000 lines"), "{e}");
        // One record fewer malformed lines in: all are read and counted.
        let (rep, _) = import_text(Format::Alibaba, &text[8..], false).unwrap();
        assert_eq!((rep.records, rep.malformed), (5, 9999));
    }

    #[test]
    fn times_are_relative_to_the_first_record() {
        let (rep, recs) = parse_all(
            Format::Alibaba,
            "3,W,8192,4096,1000\n3,R,0,512,999\n3,R,0,512,1500\n",
        );
        assert_eq!(rep.out_of_order, 1);
        assert_eq!(recs[0].t_ns, 0);
        assert_eq!(recs[1].t_ns, 0);
        assert_eq!(recs[2].t_ns, 500_000);
        assert_eq!(recs[0].op, Op::Write);
    }
}
