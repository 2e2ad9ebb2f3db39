//! Tests of the DTTRACE writer and reader: round trips, compactness, varints, and truncated
//! or corrupt inputs.

use super::*;

#[test]
fn varints_decode_the_same_in_place_and_byte_by_byte() {
    let values = [
        0u64,
        1,
        127,
        128,
        16_383,
        16_384,
        u32::MAX as u64,
        1 << 56,
        (1 << 63) - 1,
        u64::MAX,
    ];
    for v in values {
        let mut b = Vec::new();
        put_varint(&mut b, v);
        assert_eq!(varint_in(&b), Some((v, b.len())), "{v}");
        assert_eq!(get_varint_slow(&mut &b[..]).unwrap(), Some(v), "{v}");
        // cut short: in place gives up, the slow path says how
        assert_eq!(varint_in(&b[..b.len() - 1]), None);
        let e = get_varint(&mut &b[..b.len() - 1]);
        assert_eq!(v < 128, matches!(e, Ok(None)), "{v}: {e:?}");
        if v >= 128 {
            assert_eq!(e.unwrap_err().kind(), std::io::ErrorKind::UnexpectedEof);
        }
    }
    // eleven bytes: too long on both paths
    let long = [0xffu8; 10]
        .iter()
        .copied()
        .chain([0x01])
        .collect::<Vec<_>>();
    assert_eq!(varint_in(&long), None);
    let e = get_varint(&mut &long[..]).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
}

#[test]
fn records_straddling_the_read_buffer_read_the_same() {
    let recs = sample();
    let mut w = Writer::new(Vec::new(), &Header::new("test", 0, FLAG_LATENCY)).unwrap();
    for r in &recs {
        w.write(r).unwrap();
    }
    let bytes = w.finish().unwrap();
    for cap in [1usize, 2, 3, 7, 64] {
        let rd = Reader::new(std::io::BufReader::with_capacity(cap, &bytes[..]), "mem").unwrap();
        let got: Vec<Record> = rd.map(|r| r.unwrap()).collect();
        assert_eq!(got, recs, "buffer of {cap} bytes");
    }
}

fn sample() -> Vec<Record> {
    let mut v = Vec::new();
    let mut t = 0;
    for i in 0..1000u64 {
        t += (i * 7919) % 5000;
        let mut r = Record::new(
            t,
            (i * 104_729) % (1 << 30),
            4096 * (1 + (i % 3) as u32),
            Op::from_bits(i as u8),
        );
        r.sync = i % 5 == 0;
        r.stream = (i % 4) as u32;
        r.latency_ns = i * 13;
        v.push(r);
    }
    // out-of-order time and a backwards offset
    v.push(Record::new(1, 0, 0, Op::Sync));
    v
}

#[test]
fn round_trip_with_and_without_latency() {
    for flags in [0, FLAG_LATENCY] {
        let recs = sample();
        let mut w = Writer::new(Vec::new(), &Header::new("test", 42, flags)).unwrap();
        for r in &recs {
            w.write(r).unwrap();
        }
        let bytes = w.finish().unwrap();
        let mut rd = Reader::new(&bytes[..], "mem").unwrap();
        assert_eq!(rd.header().source, "test");
        assert_eq!(rd.header().start_unix_ns, 42);
        let back: Vec<Record> = (&mut rd).map(|r| r.unwrap()).collect();
        assert!(!rd.truncated());
        let want: Vec<Record> = recs
            .iter()
            .map(|r| Record {
                latency_ns: if flags == 0 { 0 } else { r.latency_ns },
                ..*r
            })
            .collect();
        assert_eq!(back, want);
    }
}

/// Regression (QA): the writer starts with length and stream 2^32 - 1 as the "previous" ones,
/// the reader started with 0, so a first record on stream 4294967295 (an Alibaba device id)
/// read back on stream 0, and a first discard of 2^32 - 1 bytes as one of 0 bytes.
#[test]
fn a_first_record_of_the_largest_stream_or_length_reads_back() {
    let mut first = Record::new(0, 0, u32::MAX, Op::Discard);
    first.stream = u32::MAX;
    let second = Record::new(1, 0, 4096, Op::Read);
    let mut w = Writer::new(Vec::new(), &Header::new("test", 0, 0)).unwrap();
    w.write(&first).unwrap();
    w.write(&second).unwrap();
    let bytes = w.finish().unwrap();
    let back: Vec<Record> = Reader::new(&bytes[..], "mem")
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(back, [first, second]);
}

/// Regression (QA): a directory given as the trace was "not a disktier trace (no DTTRACE
/// header)"; the read error (EISDIR) is now the message, and a short file is still no trace.
#[test]
fn an_unreadable_input_says_why_not_that_it_has_no_header() {
    let d = tempfile::tempdir().unwrap();
    let e = Reader::open(d.path()).err().unwrap();
    assert!(matches!(e, TraceError::Io { .. }), "{e}");
    assert!(e.to_string().contains("Is a directory"), "{e}");
    assert!(!e.to_string().contains("DTTRACE"), "{e}");
    assert!(matches!(
        Reader::new(&b"DTTRA"[..], "short"),
        Err(TraceError::NotATrace(_))
    ));
}

/// Regression (QA): a trace cut inside its header (a copy cut short) was 'not a disktier trace
/// (no DTTRACE header)' though it starts with the magic, one cut inside its source name 'I/O
/// error on the trace stream: failed to fill whole buffer' (no file, no cause), and one whose
/// source length was garbage the first again. Each now names the file and what is wrong.
#[test]
fn a_header_cut_short_or_damaged_is_named_as_such() {
    let whole = Writer::new(Vec::new(), &Header::new("alibaba", 0, 0))
        .unwrap()
        .finish()
        .unwrap();
    let message = |bytes: &[u8]| match Reader::new(bytes, "t.dtt") {
        Err(e @ TraceError::BadHeader { .. }) => e.to_string(),
        Err(e) => panic!("{} bytes: {e:?}", bytes.len()),
        Ok(_) => panic!("{} bytes read", bytes.len()),
    };
    // The magic, version, flags and start (20 bytes), the source's length (1), its 7 bytes.
    for cut in 7..28 {
        let m = message(&whole[..cut]);
        assert!(
            m.starts_with("t.dtt: the DTTRACE header is cut short or damaged (")
                && m.ends_with("record or import it again"),
            "{m}"
        );
    }
    assert!(message(&whole[..12]).contains("ends 12 bytes in"));
    assert!(message(&whole[..20]).contains("ends before the source's length"));
    assert!(message(&whole[..24]).contains("ends 3 bytes into the source's name of 7"));
    let mut huge = whole[..20].to_vec();
    huge.extend([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    assert!(message(&huge).contains("said to take 34359738368 bytes"));
    assert!(Reader::new(&whole[..28], "t.dtt").is_ok());
}

#[test]
fn sequential_records_are_compact() {
    let mut w = Writer::new(Vec::new(), &Header::new("", 0, 0)).unwrap();
    for i in 0..1000u64 {
        w.write(&Record::new(i * 100, i * 4096, 4096, Op::Read))
            .unwrap();
    }
    let bytes = w.finish().unwrap();
    // tag + 1-2 byte dt + 1 byte doff = at most 4 bytes a record
    assert!(bytes.len() < 1000 * 4 + 64, "{} bytes", bytes.len());
}

#[test]
fn truncated_and_corrupt_inputs() {
    let mut w = Writer::new(Vec::new(), &Header::new("", 0, 0)).unwrap();
    for i in 0..10u64 {
        w.write(&Record::new(i, i * 4096, 4096, Op::Write)).unwrap();
    }
    let bytes = w.finish().unwrap();
    // cut the trailer: 10 records, flagged truncated
    let cut = &bytes[..bytes.len() - 2];
    let mut rd = Reader::new(cut, "mem").unwrap();
    assert_eq!((&mut rd).filter(|r| r.is_ok()).count(), 10);
    assert!(rd.truncated());
    // A writer killed mid-record: every cut inside the last record, or inside the trailer,
    // reads as the whole records before it, flagged truncated, and never as an error.
    let whole: Vec<usize> = (1..=10)
        .map(|n| {
            let mut w = Writer::new(Vec::new(), &Header::new("", 0, 0)).unwrap();
            for i in 0..n as u64 {
                w.write(&Record::new(i, i * 4096, 4096, Op::Write)).unwrap();
            }
            w.finish().unwrap().len() - 2
        })
        .collect();
    for cut in whole[8] + 1..bytes.len() {
        let mut rd = Reader::new(&bytes[..cut], "mem").unwrap();
        let read: Vec<_> = (&mut rd).collect();
        assert!(read.iter().all(|r| r.is_ok()), "cut at {cut}: {read:?}");
        let want = if cut >= whole[9] { 10 } else { 9 };
        assert_eq!(read.len(), want, "cut at {cut}");
        assert!(rd.truncated(), "cut at {cut}");
    }
    // wrong count in the trailer
    let mut bad = bytes.clone();
    *bad.last_mut().unwrap() = 9;
    assert!(Reader::new(&bad[..], "mem").unwrap().any(|r| r.is_err()));
    assert!(matches!(
        Reader::new(&b"hello world, not a trace"[..], "x"),
        Err(TraceError::NotATrace(_))
    ));
    let mut v2 = bytes.clone();
    v2[7] = 9;
    assert!(matches!(
        Reader::new(&v2[..], "x"),
        Err(TraceError::Version { .. })
    ));
}
