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

/// LEB128 of `v`, as the DTTRACE format writes varints.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A DTTRACE file (no trailer) of raw read records of 4 KiB: (time step, offset step) each,
/// as the format stores them (zigzag varints).
fn raw_trace(steps: &[(i64, i64)]) -> Vec<u8> {
    let w = Writer::new(Vec::new(), &Header::new("test", 0, 0)).unwrap();
    let mut b = w.finish().unwrap();
    b.truncate(b.len() - 2); // the trailer: 0xFF and the count 0
    for &(dt, doff) in steps {
        b.push(0); // tag: a read, stream and length given
        varint(((dt << 1) ^ (dt >> 63)) as u64, &mut b);
        varint(0, &mut b);
        varint(((doff << 1) ^ (doff >> 63)) as u64, &mut b);
        varint(4096, &mut b);
    }
    b
}

/// Regression (QA): an offset step that ran past 2^64 wrapped silently to a small offset,
/// and time steps did the same. Every step is now an exact signed difference: one that leaves
/// the range is a corrupt record, named by its index.
#[test]
fn a_step_that_leaves_the_offset_or_time_range_is_corrupt() {
    let high = i64::MAX - 8191; // 2^63 - 8 KiB: its 4 KiB read ends below 2^63 - 1
    for (steps, why) in [
        // forward past the largest offset
        (vec![(0, high), (0, i64::MAX)], "2^63 - 1"),
        // back below byte 0
        (vec![(0, 4096), (0, -16384)], "leaves 0..2^64"),
        // time before the trace's start
        (vec![(5, 0), (-10, 0)], "time step -10"),
    ] {
        let bytes = raw_trace(&steps);
        let mut r = Reader::new(&bytes[..], "hostile").unwrap();
        assert!(r.next().unwrap().is_ok(), "{steps:?}");
        let e = r.next().unwrap().unwrap_err();
        assert!(matches!(e, TraceError::Corrupt { index: 1, .. }), "{e}");
        assert!(e.to_string().contains(why), "{steps:?}: {e}");
    }
    // What the writer writes within the range reads back, big steps included.
    let recs = [
        Record::new(0, (high as u64) & !4095, 4096, Op::Read),
        Record::new(i64::MAX as u64, 0, 4096, Op::Write),
        Record::new(3, 4096, 4096, Op::Read),
    ];
    let mut w = Writer::new(Vec::new(), &Header::new("test", 0, 0)).unwrap();
    for r in &recs {
        w.write(r).unwrap();
    }
    let bytes = w.finish().unwrap();
    let back: Vec<Record> = Reader::new(&bytes[..], "ok")
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back, recs);
    // A step the format cannot hold is refused by the writer, not wrapped.
    let mut w = Writer::new(Vec::new(), &Header::new("test", 0, 0)).unwrap();
    w.write(&Record::new(0, 0, 4096, Op::Read)).unwrap();
    assert!(w.write(&Record::new(u64::MAX, 0, 4096, Op::Read)).is_err());
}

/// Regression (QA): an Alibaba timestamp of 2^64 - 1 µs saturated to 2^64 ns and made a
/// trace "over 18446744073.710 s"; a timestamp out of range is a malformed line, named.
#[test]
fn a_timestamp_past_2_64_ns_is_a_malformed_line() {
    let text = b"1,R,0,4096,1000\n1,W,4096,4096,18446744073709551615\n1,R,0,4096,2000\n";
    let recs = import_text(Format::Alibaba, text, false).unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1].t_ns, 1_000_000);
    let e = import_text(Format::Alibaba, text, true).unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains(":2:") && m.contains("timestamp 18446744073709551615 µs is out of range"),
        "{m}"
    );
    // Tencent seconds, MSR ticks and fio's microseconds alike.
    for (format, line) in [
        (Format::Tencent, "18446744073709551615,0,8,0,1\n"),
        (Format::Msr, "18446744073709551615,hm,1,Read,0,4096,1\n"),
        (
            Format::FioIolog,
            "fio version 3 iolog\n18446744073709551615 /f read 0 4096\n",
        ),
    ] {
        let e = import_text(format, line.as_bytes(), true).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{format:?}: {e}");
    }
    // Two records more than 2^63 ns apart cannot be steps of one trace.
    let e = import_text(
        Format::Alibaba,
        b"1,R,0,4096,0\n1,R,0,4096,18446744073709551\n",
        true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("292 years"), "{e}");
}

/// Regression (QA): an empty file was "(0 malformed lines, first at line(s) []); check the
/// format name", and a fio iolog of an unknown version got the generic header text.
#[test]
fn an_import_without_records_says_why() {
    let e = import_text(Format::Alibaba, b"", false).unwrap_err();
    assert!(e.to_string().ends_with("the file is empty"), "{e}");
    let e = import_text(
        Format::FioIolog,
        b"fio version 7 iolog\n/f read 0 4096\n",
        false,
    )
    .unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("version \"7\" is not supported") && m.contains("versions 2 and 3"),
        "{m}"
    );
    let e = import_text(Format::Msr, b"Timestamp,Hostname\n# nothing\n", false).unwrap_err();
    assert!(e.to_string().contains("all headers, comments"), "{e}");
}

/// Regression (QA): `--sample 1e-30` kept almost no block and scaled the sample's counters
/// by 1e30, which saturated to 16384 PiB with every policy at 100 % hits. A rate below the
/// hash space's resolution is refused; the smallest it resolves is accepted.
#[test]
fn a_sample_rate_no_block_can_pass_is_refused() {
    for r in [1e-30, 1e-8, 0.5 / (1u64 << 24) as f64] {
        let e = config(vec![1 << 30], Some(r)).check().unwrap_err();
        assert!(e.to_string().contains("below 1/2^24"), "{r}: {e}");
    }
    assert!(config(vec![1 << 30], Some(1.0 / (1u64 << 24) as f64))
        .check()
        .is_ok());
}

/// Regression (QA): at `--sample 0.01` a 16 MiB bcache was simulated as 164 KiB, padded to 4
/// buckets of 512 KiB, and hit 20.9 % where the exact replay hit 0.19 %. The bucket minimum
/// applies to the size each replay simulates.
#[test]
fn bcache_and_lvmcache_minimums_apply_to_the_sampled_cache() {
    let mut cfg = config(vec![16 << 20, 256 << 20], Some(0.01));
    let e = cfg.check_sizes().unwrap_err().to_string();
    assert!(
        e.contains("at --sample 0.01 the 16 MiB cache is simulated as 163.84 KiB")
            && e.contains("fewer than 4 bcache buckets")
            && e.contains("at least 200 MiB")
            && e.contains("--sample 0.13"),
        "{e}"
    );
    cfg.sizes = vec![256 << 20];
    assert!(cfg.check_sizes().is_ok());
    cfg.policies = vec![PolicyKind::Lvmcache];
    cfg.sizes = vec![4 << 20];
    let e = cfg.check_sizes().unwrap_err().to_string();
    assert!(e.contains("less than one lvmcache chunk"), "{e}");
    cfg.sample = None;
    assert!(cfg.check_sizes().is_ok());
}

/// Regression (QA): `plan --trace` loaded a multi-volume trace with every volume in one
/// address space, so byte 0 of one volume hit on byte 0 of another. The loader now gives each
/// volume of an Alibaba, Tencent, MSR or fio-iolog trace its own range; a blkparse trace's
/// processes still share their device's.
#[test]
fn loading_a_multi_volume_trace_keeps_its_volumes_apart() {
    let d = tempfile::tempdir().unwrap();
    for (source, apart) in [("alibaba", true), ("tencent", true), ("blkparse", false)] {
        let p = d.path().join(format!("{source}.dtt"));
        let mut w = Writer::create(&p, &Header::new(source, 0, 0)).unwrap();
        for (i, stream) in [1u32, 2, 1].into_iter().enumerate() {
            let mut r = Record::new(i as u64, 0, 4096, Op::Read);
            r.stream = stream;
            w.write(&r).unwrap();
        }
        w.finish().unwrap().flush().unwrap();
        let recs = trace::load(&p).unwrap().1;
        let offsets: Vec<u64> = recs.iter().map(|r| r.offset).collect();
        let second = if apart {
            trace::volumes::VOLUME_SPAN
        } else {
            0
        };
        assert_eq!(offsets, [0, second, 0], "{source}");
    }
}

/// Regression (QA): a device, disk or volume id past 2^32 - 1 was cut to 32 bits, so volume
/// 2^32 + 1 became volume 1 and shared its blocks. It is now a malformed line naming the id.
#[test]
fn a_stream_id_past_32_bits_is_a_malformed_line() {
    let big = 1u64 << 32 | 1;
    for (format, line, what) in [
        (Format::Alibaba, format!("{big},R,0,4096,1\n"), "device id"),
        (
            Format::Tencent,
            format!("1538323200,0,8,0,{big}\n"),
            "volume id",
        ),
        (
            Format::Msr,
            format!("128166372003061629,hm,{big},Read,0,4096,1\n"),
            "disk number",
        ),
        (
            Format::Blkparse,
            format!("  8,0 0 1 0.000000000 {big} Q R 0 + 8 [a]\n"),
            "pid",
        ),
    ] {
        let e = import_text(format, line.as_bytes(), true).unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("{what} {big} is over 4294967295")),
            "{format:?}: {e}"
        );
        // The largest 32-bit id is kept as it is.
        let ok = line.replace(&big.to_string(), &u32::MAX.to_string());
        let recs = import_text(format, ok.as_bytes(), true).unwrap();
        assert_eq!(recs[0].stream, u32::MAX, "{format:?}");
    }
}

/// QA: `trace import blkparse FIFO -o OUT` made its temporary file beside OUT before it opened
/// the FIFO, whose open waits for a writer (a first Ctrl-C does not end that wait, a second ends
/// the process at once): a `.disktier-import-*.tmp` was left in OUT's directory. The input is
/// opened first now, so nothing is made while it waits.
#[test]
fn an_import_waiting_for_its_fifo_has_made_no_file_yet() {
    use std::sync::{atomic::AtomicBool, Arc};
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("in");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success(), "mkfifo");
    let out = d.path().join("t.dttrace");
    let (input, output) = (fifo.clone(), out.clone());
    let import = std::thread::spawn(move || {
        let stop = Arc::new(AtomicBool::new(false));
        disktier_cachesim::import::import_to_file(Format::Msr, &input, &output, false, stop)
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // A writer that writes nothing ends the wait (and the import, with no records).
    drop(std::fs::OpenOptions::new().write(true).open(&fifo).unwrap());
    let _ = import.join().unwrap();
    assert_eq!(names, ["in"], "made while the FIFO had no writer");
}

/// QA: `trace import ... -o DIR/` (an existing directory) read the whole input and only then
/// failed at the rename, as '-o DIR/: Not a directory (os error 20)', and so did a path ending
/// in `/` for a directory that does not exist. Both are refused before the input is read,
/// naming a directory; nothing is left beside them.
#[test]
fn an_output_that_names_a_directory_is_refused_before_reading() {
    use std::sync::{atomic::AtomicBool, Arc};
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.csv");
    std::fs::write(&input, "419,W,0,4096,1\n").unwrap();
    let traces = d.path().join("traces");
    std::fs::create_dir(&traces).unwrap();
    let cases = [
        (traces.clone(), "a directory"),
        (d.path().join("traces/"), "a directory"),
        (d.path().join("new/"), "a directory's path (it ends in /)"),
    ];
    for (output, what) in cases {
        let stop = Arc::new(AtomicBool::new(false));
        let e = disktier_cachesim::import::import_to_file(
            Format::Alibaba,
            &input,
            &output,
            false,
            stop,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "-o {}: {what}: a trace goes to a file (or a FIFO, or a character device such as /dev/null); pass a file's path",
                output.display()
            )
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["in.csv", "traces"]);
    assert_eq!(std::fs::read_dir(&traces).unwrap().count(), 0);
}
