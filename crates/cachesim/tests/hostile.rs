//! Hostile traces (#13): what one record may expand to, lines of any length, numbers past 2^64,
//! and the simulators' memory bounds, each refused with a clear error instead of an OOM, a hang
//! or a panic.

use disktier_cachesim::import::{import, Format, MAX_LINE};
use disktier_cachesim::policy::{bcache::BcacheConfig, smq::SmqConfig, PolicyKind};
use disktier_cachesim::sim::{SimConfig, MAX_CACHE_BLOCKS};
use disktier_cachesim::trace::{self, Header, MAX_REQUEST_BYTES};
use disktier_cachesim::{Op, Reader, Record, TraceError, Writer};
use std::io::Write;

fn import_text(format: Format, text: &[u8], strict: bool) -> Result<Vec<Record>, TraceError> {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("in.txt");
    std::fs::write(&p, text).unwrap();
    let (_, out) = import(format, &p, Vec::new(), strict)?;
    Reader::new(&out[..], "imported")
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
}

/// Regression: a record of 4 GiB was expanded block by block (a million blocks each).
#[test]
fn a_trace_record_longer_than_a_block_request_is_corrupt() {
    let mut w = Writer::new(Vec::new(), &Header::new("test", 0, 0)).unwrap();
    w.write(&Record::new(0, 0, 4096, Op::Read)).unwrap();
    w.write(&Record::new(1, 0, u32::MAX, Op::Write)).unwrap();
    let bytes = w.finish().unwrap();
    let mut r = Reader::new(&bytes[..], "hostile").unwrap();
    assert!(r.next().unwrap().is_ok());
    let e = r.next().unwrap().unwrap_err();
    assert!(matches!(e, TraceError::Corrupt { index: 1, .. }), "{e}");
    assert!(e.to_string().contains("64 MiB"), "{e}");
    // A discard moves no data: any length is fine.
    let ok = Record::new(0, 0, u32::MAX, Op::Discard);
    assert!(ok.check().is_ok());
    assert!(Record::new(0, 0, MAX_REQUEST_BYTES as u32, Op::Read)
        .check()
        .is_ok());
    // A range past 2^64.
    assert!(Record::new(0, u64::MAX - 10, 4096, Op::Read)
        .check()
        .is_err());
    assert_eq!(
        Record::new(0, u64::MAX - 10, 4096, Op::Read).end(),
        u64::MAX
    );
}

#[test]
fn importers_refuse_huge_lengths_and_numbers_past_2_64() {
    // MSR: a 4 GiB - 1 size is over the request cap: malformed, skipped; the good line stays.
    let text =
        b"128166372003061629,hm,1,Read,0,4294967295,1\n128166372003061629,hm,1,Read,0,4096,1\n";
    let recs = import_text(Format::Msr, text, false).unwrap();
    assert_eq!(recs.len(), 1);
    let e = import_text(Format::Msr, text, true).unwrap_err();
    assert!(
        e.to_string().contains("64 MiB") && e.to_string().contains(":1:"),
        "{e}"
    );
    // blkparse: a sector and a time past 2^64 once multiplied.
    for line in [
        "8,0 0 1 0.000000000 1 Q R 36893488147419103 + 8 [x]\n",
        "8,0 0 1 18446744073709551615.5 1 Q R 8 + 8 [x]\n",
        "8,0 0 1 0.1 1 Q R 8 + 36893488147419103 [x]\n",
    ] {
        let e = import_text(Format::Blkparse, line.as_bytes(), true).unwrap_err();
        assert!(matches!(e, TraceError::Malformed { .. }), "{line}: {e}");
    }
}

/// Lines of any length: memory stays bounded, the line is malformed, the next one is read.
#[test]
fn an_endless_line_is_malformed_and_the_next_line_still_counts() {
    let mut text = vec![b'7'; 50 * MAX_LINE];
    text.push(b'\n');
    text.extend_from_slice(b"128166372003061629,hm,1,Write,0,4096,1\n");
    let recs = import_text(Format::Msr, &text, false).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].op, Op::Write);
    let e = import_text(Format::Msr, &text, true).unwrap_err();
    assert!(e.to_string().contains("longer than 4096 bytes"), "{e}");
    // A long last line without a newline, and binary junk.
    let junk: Vec<u8> = (0..100_000u32).map(|i| (i * 7919 % 256) as u8).collect();
    let e = import_text(Format::Blkparse, &junk, false).unwrap_err();
    assert!(matches!(e, TraceError::Empty { .. }), "{e}");
}

fn config(sizes: Vec<u64>, sample: Option<f64>) -> SimConfig {
    SimConfig {
        block: 4096,
        policies: vec![PolicyKind::Lru, PolicyKind::Bcache],
        sizes,
        sample,
        bcache: BcacheConfig::default(),
        smq: SmqConfig::default(),
    }
}

/// Regression: the bcache model allocated a slot per cache block, whatever the size asked.
#[test]
fn cache_sizes_past_the_memory_bound_are_refused_unless_sampled() {
    let huge = (MAX_CACHE_BLOCKS + 1) * 4096;
    let e = config(vec![huge], None).check().unwrap_err();
    assert!(e.to_string().contains("--sample"), "{e}");
    assert!(config(vec![huge], Some(0.01)).check().is_ok());
    assert!(config(vec![u64::MAX], Some(0.001)).check().is_err());
    assert!(config(vec![1 << 30], None).check().is_ok());
}

#[test]
fn loading_more_requests_than_the_bound_is_a_clear_error() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.dttrace");
    let mut w = Writer::create(&p, &Header::new("test", 0, 0)).unwrap();
    for i in 0..100u64 {
        w.write(&Record::new(i, i * 4096, 4096, Op::Read)).unwrap();
    }
    w.finish().unwrap().flush().unwrap();
    assert_eq!(trace::load_at_most(&p, 100).unwrap().1.len(), 100);
    let e = trace::load_at_most(&p, 99).unwrap_err();
    assert!(e.to_string().contains("more than 99 requests"), "{e}");
}

/// The exact curve tracks one entry per distinct block: past its bound it is an error naming
/// `--sample`, and a sampled curve of the same trace stays within it.
#[test]
fn the_exact_curve_refuses_more_distinct_blocks_than_its_bound() {
    use disktier_cachesim::mrc::Mrc;
    let trace: Vec<Record> = (0..10_000u64)
        .map(|i| Record::new(i, i * 4096, 4096, Op::Read))
        .collect();
    let e = Mrc::build_at_most(&trace, 4096, None, 1000).unwrap_err();
    assert!(e.to_string().contains("--sample"), "{e}");
    assert!(Mrc::build_at_most(&trace, 4096, Some(0.01), 1000).is_ok());
    assert!(Mrc::build(&trace, 4096, None).is_ok());
}

/// Endless random bytes, for an input that never ends.
struct Noise(u64);

impl std::io::Read for Noise {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        for b in buf.iter_mut() {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            *b = (self.0 >> 56) as u8;
        }
        Ok(buf.len())
    }
}

/// An endless input (`trace import msr /dev/zero` or `/dev/urandom`) ends with an error instead
/// of reading forever.
#[test]
fn an_endless_input_that_is_no_trace_stops() {
    use disktier_cachesim::import::import_reader;
    let p = std::path::Path::new("/dev/zero");
    let e = import_reader(Format::Msr, std::io::repeat(0), p, Vec::new(), false).unwrap_err();
    assert!(e.to_string().contains("not a text trace"), "{e}");
    let p = std::path::Path::new("/dev/urandom");
    let e = import_reader(Format::Blkparse, Noise(1), p, Vec::new(), false).unwrap_err();
    assert!(matches!(e, TraceError::Empty { .. }), "{e}");
}
