//! The `DTTRACE` binary format, version 1 (specified in `docs/trace.md`):
//!
//! ```text
//! header:  "DTTRACE" (7 bytes) | version u8 = 1 | flags u32 LE | start_unix_ns u64 LE
//!          | source: varint length + UTF-8 (who wrote it: "disktier-engine", "msr", ...)
//! record:  tag u8 | dt zigzag-varint | [stream varint] | doff zigzag-varint | [len varint]
//!          | [latency varint]
//! trailer: 0xFF | record count varint
//! ```
//!
//! Tag bits 0-1 hold the op, bit 2 the sync flag, bit 3 "same length as the previous record"
//! (length omitted), bit 4 "same stream as the previous record" (stream omitted); bits 5-7 are
//! zero, so 0xFF can only be the trailer. `dt` is the time since the previous record and `doff`
//! the offset minus the previous record's end, both signed (zigzag), so a sequential stream
//! costs one byte for its offset. Latency is present only when header flag bit 0 is set.
//! A file without the trailer (a writer that was killed) reads as truncated, not as an error.

use super::{Op, Record};
use crate::TraceError;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

pub const MAGIC: &[u8; 7] = b"DTTRACE";
pub const VERSION: u8 = 1;
/// Header flag: every record carries its completion latency.
pub const FLAG_LATENCY: u32 = 1;

const TAG_SYNC: u8 = 1 << 2;
const TAG_SAME_LEN: u8 = 1 << 3;
const TAG_SAME_STREAM: u8 = 1 << 4;
const TAG_TRAILER: u8 = 0xFF;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub flags: u32,
    /// Wall-clock time of the first record, nanoseconds since the Unix epoch (0 when unknown).
    pub start_unix_ns: u64,
    pub source: String,
}

impl Header {
    pub fn new(source: &str, start_unix_ns: u64, flags: u32) -> Header {
        Header {
            version: VERSION,
            flags,
            start_unix_ns,
            source: source.to_string(),
        }
    }
}

#[inline]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}
#[inline]
fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[inline]
fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Streams records into a trace. Call [`Writer::finish`] to write the trailer; dropping an
/// unfinished writer finishes it too (errors are then lost).
pub struct Writer<W: Write> {
    out: Option<W>,
    buf: Vec<u8>,
    flags: u32,
    prev_t: u64,
    prev_end: u64,
    prev_len: u32,
    prev_stream: u32,
    count: u64,
}

impl Writer<BufWriter<File>> {
    pub fn create(path: &Path, header: &Header) -> Result<Self, TraceError> {
        let f = File::create(path).map_err(|e| TraceError::io(path, e))?;
        Writer::new(BufWriter::with_capacity(1 << 16, f), header)
    }
}

impl<W: Write> Writer<W> {
    pub fn new(mut out: W, header: &Header) -> Result<Self, TraceError> {
        let mut h = Vec::with_capacity(32);
        h.extend_from_slice(MAGIC);
        h.push(VERSION);
        h.extend_from_slice(&header.flags.to_le_bytes());
        h.extend_from_slice(&header.start_unix_ns.to_le_bytes());
        put_varint(&mut h, header.source.len() as u64);
        h.extend_from_slice(header.source.as_bytes());
        out.write_all(&h)?;
        Ok(Writer {
            out: Some(out),
            buf: Vec::with_capacity(1 << 12),
            flags: header.flags,
            prev_t: 0,
            prev_end: 0,
            prev_len: u32::MAX,
            prev_stream: u32::MAX,
            count: 0,
        })
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn write(&mut self, r: &Record) -> Result<(), TraceError> {
        let mut tag = r.op as u8;
        if r.sync {
            tag |= TAG_SYNC;
        }
        if r.len == self.prev_len {
            tag |= TAG_SAME_LEN;
        }
        if r.stream == self.prev_stream {
            tag |= TAG_SAME_STREAM;
        }
        // Steps are stored as exact signed 64-bit differences (the reader refuses any that
        // leave 0..2^64): records within 2^63 of each other, as importers and
        // `Record::check` keep them.
        let step = |now: u64, prev: u64, what: &str| {
            i64::try_from(i128::from(now) - i128::from(prev)).map_err(|_| TraceError::Invalid {
                what: "trace record",
                why: format!("its {what} {now} is 2^63 or more from the previous record's {prev}"),
            })
        };
        let dt = step(r.t_ns, self.prev_t, "time")?;
        let doff = step(r.offset, self.prev_end, "offset")?;
        self.buf.push(tag);
        put_varint(&mut self.buf, zigzag(dt));
        if tag & TAG_SAME_STREAM == 0 {
            put_varint(&mut self.buf, r.stream as u64);
        }
        put_varint(&mut self.buf, zigzag(doff));
        if tag & TAG_SAME_LEN == 0 {
            put_varint(&mut self.buf, r.len as u64);
        }
        if self.flags & FLAG_LATENCY != 0 {
            put_varint(&mut self.buf, r.latency_ns);
        }
        self.prev_t = r.t_ns;
        self.prev_end = r.end();
        self.prev_len = r.len;
        self.prev_stream = r.stream;
        self.count += 1;
        if self.buf.len() >= 1 << 12 {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> Result<(), TraceError> {
        if let Some(out) = self.out.as_mut() {
            out.write_all(&self.buf)?;
        }
        self.buf.clear();
        Ok(())
    }

    /// Writes the trailer and flushes; returns the inner writer.
    pub fn finish(mut self) -> Result<W, TraceError> {
        self.finish_inner()?;
        Ok(self.out.take().expect("writer already finished"))
    }

    fn finish_inner(&mut self) -> Result<(), TraceError> {
        if self.out.is_none() {
            return Ok(());
        }
        self.buf.push(TAG_TRAILER);
        let n = self.count;
        put_varint(&mut self.buf, n);
        self.flush_buf()?;
        if let Some(out) = self.out.as_mut() {
            out.flush()?;
        }
        Ok(())
    }
}

impl<W: Write> Drop for Writer<W> {
    fn drop(&mut self) {
        if self.out.is_some() {
            let _ = self.finish_inner();
        }
    }
}

/// Streams records out of a trace.
pub struct Reader<R: BufRead> {
    input: R,
    header: Header,
    prev_t: u64,
    prev_end: u64,
    prev_len: u32,
    prev_stream: u32,
    index: u64,
    done: bool,
    truncated: bool,
    /// The input ended inside a record: what a killed writer leaves, since its buffer reaches
    /// the file in blocks that do not end on a record's boundary.
    cut_short: bool,
}

impl Reader<BufReader<File>> {
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        Reader::new(
            BufReader::with_capacity(1 << 16, f),
            &path.display().to_string(),
        )
    }
}

fn read_byte<R: BufRead>(r: &mut R) -> std::io::Result<Option<u8>> {
    loop {
        match r.fill_buf() {
            Ok([]) => return Ok(None),
            Ok(buf) => {
                let b = buf[0];
                r.consume(1);
                return Ok(Some(b));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The longest varint the format allows: ten bytes carry 64 bits.
const VARINT_MAX: usize = 10;

/// Decodes a whole varint from the front of `buf`: `Some((value, bytes))` when its last byte
/// is within the first [`VARINT_MAX`] bytes of `buf`, `None` otherwise (cut by the buffer's
/// end, or too long: [`get_varint`] then reads it byte by byte and says which).
#[inline]
fn varint_in(buf: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in buf.iter().take(VARINT_MAX).enumerate() {
        v |= ((b & 0x7f) as u64) << (7 * i);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Reads a varint; `Ok(None)` at a clean end of input before its first byte. The common case
/// (the whole varint already in the reader's buffer) decodes in place, without a call per
/// byte; the rest takes the byte-by-byte path, which gives the same value or error.
fn get_varint<R: BufRead>(r: &mut R) -> Result<Option<u64>, std::io::Error> {
    if let Ok(buf) = r.fill_buf() {
        if let Some((v, n)) = varint_in(buf) {
            r.consume(n);
            return Ok(Some(v));
        }
    }
    get_varint_slow(r)
}

fn get_varint_slow<R: BufRead>(r: &mut R) -> Result<Option<u64>, std::io::Error> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let Some(b) = read_byte(r)? else {
            return if shift == 0 {
                Ok(None)
            } else {
                Err(std::io::ErrorKind::UnexpectedEof.into())
            };
        };
        if shift >= 64 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "varint longer than 64 bits",
            ));
        }
        v |= ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            return Ok(Some(v));
        }
        shift += 7;
    }
}

impl<R: BufRead> Reader<R> {
    /// Reads the header; `what` names the input in errors.
    pub fn new(mut input: R, what: &str) -> Result<Self, TraceError> {
        let mut fixed = Vec::with_capacity(20);
        match (&mut input).take(20).read_to_end(&mut fixed) {
            // What could not be read (a directory, EIO) says why, not "no DTTRACE header".
            Err(e) => return Err(TraceError::io(what, e)),
            Ok(_) if fixed.len() < MAGIC.len() || fixed[..7] != MAGIC[..] => {
                return Err(TraceError::NotATrace(what.to_string()))
            }
            Ok(_) => {}
        }
        // Past the magic, what is wrong is the trace's own header, not its kind (QA: a trace
        // cut inside its header was 'not a disktier trace (no DTTRACE header)', and one cut
        // inside its source name 'I/O error on the trace stream: failed to fill whole
        // buffer', naming neither the file nor the cause).
        let bad = |why: String| TraceError::BadHeader {
            what: what.to_string(),
            why,
        };
        if fixed.len() < 20 {
            return Err(bad(format!(
                "the file ends {} bytes in, inside the 20 bytes of magic, version, flags and start time",
                fixed.len()
            )));
        }
        let version = fixed[7];
        if version > VERSION || version == 0 {
            return Err(TraceError::Version {
                what: what.to_string(),
                found: version,
                supported: VERSION,
            });
        }
        let flags = u32::from_le_bytes(fixed[8..12].try_into().expect("4 bytes"));
        let start_unix_ns = u64::from_le_bytes(fixed[12..20].try_into().expect("8 bytes"));
        let n = match get_varint(&mut input) {
            Ok(Some(n)) => n,
            Ok(None) => return Err(bad("the file ends before the source's length".into())),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(bad("the file ends inside the source's length".into()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(bad(format!("the source's length: {e}")))
            }
            Err(e) => return Err(TraceError::io(what, e)),
        };
        if n > 4096 {
            return Err(bad(format!(
                "the source's name is said to take {n} bytes, more than the 4096 a reader takes (a source is a name: msr, disktier-engine)"
            )));
        }
        let mut s = Vec::with_capacity(n as usize);
        (&mut input)
            .take(n)
            .read_to_end(&mut s)
            .map_err(|e| TraceError::io(what, e))?;
        if s.len() as u64 != n {
            return Err(bad(format!(
                "the file ends {} bytes into the source's name of {n}",
                s.len()
            )));
        }
        Ok(Reader {
            input,
            header: Header {
                version,
                flags,
                start_unix_ns,
                source: String::from_utf8_lossy(&s).into_owned(),
            },
            prev_t: 0,
            prev_end: 0,
            // What the writer starts from: a first record of length or stream 2^32 - 1 is
            // written with its "same as the previous" bit and no value.
            prev_len: u32::MAX,
            prev_stream: u32::MAX,
            index: 0,
            done: false,
            truncated: false,
            cut_short: false,
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// True when the input ended without the trailer (the writer did not finish), also when
    /// it ended inside a record, which is then not returned.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    fn corrupt(&self, why: impl Into<String>) -> TraceError {
        TraceError::Corrupt {
            index: self.index,
            why: why.into(),
        }
    }

    /// Why a record's time or offset step leaves 0..2^64 (kept out of the reading loop).
    #[cold]
    #[inline(never)]
    fn bad_step(&self, dt: i64, doff: i64) -> TraceError {
        if self.prev_t.checked_add_signed(dt).is_none() {
            self.corrupt(format!(
                "its time step {dt} ns from {} ns leaves 0..2^64 ns",
                self.prev_t
            ))
        } else {
            self.corrupt(format!(
                "its offset step {doff} from byte {} leaves 0..2^64",
                self.prev_end
            ))
        }
    }

    /// The next varint of a record: malformed, the record is corrupt; cut short by the end of
    /// the input, the trace is truncated there (see [`Reader::truncated`]).
    fn varint(&mut self) -> Result<u64, TraceError> {
        match get_varint(&mut self.input) {
            Ok(Some(v)) => Ok(v),
            Ok(None) => {
                self.cut_short = true;
                Err(self.corrupt("record cut short"))
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                self.cut_short = true;
                Err(self.corrupt("record cut short"))
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                Err(self.corrupt(e.to_string()))
            }
            Err(e) => Err(TraceError::Stream(e)),
        }
    }

    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        let tag = match read_byte(&mut self.input)? {
            None => {
                self.truncated = true;
                return Ok(None);
            }
            Some(t) => t,
        };
        if tag == TAG_TRAILER {
            let n = self.varint()?;
            if n != self.index {
                return Err(self.corrupt(format!(
                    "trailer counts {n} records but {} were read",
                    self.index
                )));
            }
            return Ok(None);
        }
        if tag & 0xE0 != 0 {
            return Err(self.corrupt(format!("invalid tag byte {tag:#04x}")));
        }
        let dt = unzigzag(self.varint()?);
        let stream = if tag & TAG_SAME_STREAM != 0 {
            self.prev_stream
        } else {
            self.varint()? as u32
        };
        let doff = unzigzag(self.varint()?);
        let len = if tag & TAG_SAME_LEN != 0 {
            self.prev_len
        } else {
            let l = self.varint()?;
            u32::try_from(l).map_err(|_| self.corrupt("length over 4 GiB"))?
        };
        let latency_ns = if self.header.flags & FLAG_LATENCY != 0 {
            self.varint()?
        } else {
            0
        };
        // Both steps are exact signed differences (the writer refuses any that would wrap):
        // one that leaves 0..2^64 is a corrupt file, not a value to wrap around.
        let (Some(t_ns), Some(offset)) = (
            self.prev_t.checked_add_signed(dt),
            self.prev_end.checked_add_signed(doff),
        ) else {
            return Err(self.bad_step(dt, doff));
        };
        let rec = Record {
            t_ns,
            offset,
            len,
            op: Op::from_bits(tag),
            sync: tag & TAG_SYNC != 0,
            stream,
            latency_ns,
        };
        rec.check().map_err(|why| self.corrupt(why))?;
        self.prev_t = rec.t_ns;
        self.prev_end = rec.end();
        self.prev_len = len;
        self.prev_stream = stream;
        self.index += 1;
        Ok(Some(rec))
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Record, TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_record() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => {
                self.done = true;
                None
            }
            // A record the end of the input cut: the records before it stand, as after a
            // missing trailer.
            Err(_) if self.cut_short => {
                self.done = true;
                self.truncated = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
