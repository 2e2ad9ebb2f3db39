use super::super::testutil::replay;
use super::*;

fn run(cfg: &SmqConfig, cache_bytes: u64, trace: &[Record]) -> Counters {
    replay(Smq::new(cfg, 4096, cache_bytes, None, 1.0), trace)
}

fn read(t: u64, chunk: u64) -> Record {
    Record::new(t, chunk * 65536, 4096, Op::Read)
}

#[test]
fn hand_computed_promotion_and_hits() {
    // Cache of 2 chunks (64 KiB each); chunks 0, 16, 32 lie in hotspot regions 0, 1, 2.
    // Levels hold at most ceil(regions / 64) = 1 region each (rebalancing moves the most
    // recently used of an over-full level up); new regions enter at the cold end of level 0.
    // read 0:  region 0 -> L0. The cache has room: chunk 0 promoted (64 KiB from origin).
    // read 16: region 1 -> L0 front; L0 over-full -> region 0 up to L1. Room: promoted.
    // read 32: region 2 -> L0 front; region 1 up to L1, then region 1 up to L2. The cache
    //          is full; the hottest quarter of 3 regions is 1 region (L2), so reads need
    //          level 2: region 2 is at 0 -> not promoted, 4 KiB read from the origin.
    // read 32: region 2 hit: swaps with region 0 into L1 -> level 1 < 2: origin again.
    // read 16, read 0: cache hits.
    let t = [
        read(0, 0),
        read(1, 16),
        read(2, 32),
        read(3, 32),
        read(4, 16),
        read(5, 0),
    ];
    let c = run(&SmqConfig::default(), 2 * 65536, &t);
    assert_eq!((c.read_blocks, c.read_hits), (6, 2));
    assert_eq!(c.backing_read_bytes, 2 * 65536 + 2 * 4096);
    assert_eq!(c.cache_write_bytes, 2 * 65536);
}

#[test]
fn a_hot_region_is_promoted_once_the_cache_is_full() {
    // Cache of 1 chunk, filled by chunk 0. Chunk 16's region is read repeatedly: it
    // climbs the hotspot levels until it is in the hottest quarter, then it is promoted
    // (demoting chunk 0) and hits from then on.
    let mut t = vec![read(0, 0)];
    for i in 0..20 {
        t.push(read(1 + i, 16));
    }
    let c = run(&SmqConfig::default(), 65536, &t);
    assert!(c.read_hits >= 15, "{} hits", c.read_hits);
    assert_eq!(c.cache_write_bytes, 2 * 65536);
}

#[test]
fn writeback_keeps_dirty_chunks_and_writes_them_back_on_demotion() {
    // Cache of 1 chunk, writeback. Write chunk 0 (room -> promoted dirty; a 4 KiB write
    // does not cover the chunk, so the chunk is read first). Then read chunk 16 twice:
    // the second read's region is hot, chunk 0 is demoted: its 64 KiB is written back.
    let cfg = SmqConfig {
        mode: CacheMode::Writeback,
        ..SmqConfig::default()
    };
    let t = [Record::new(0, 0, 4096, Op::Write), read(1, 16), read(2, 16)];
    let c = run(&cfg, 65536, &t);
    assert_eq!(c.writeback_bytes, 65536);
    assert_eq!(c.backing_write_bytes, 65536);
    assert_eq!(c.dirty_bytes_end, 0);
    // the same in writethrough: the write goes to both devices at once, nothing to write back
    let c2 = run(&SmqConfig::default(), 65536, &t);
    assert_eq!((c2.writeback_bytes, c2.backing_write_bytes), (0, 4096));
    // a whole-chunk write needs no origin read
    let c3 = run(&cfg, 65536, &[Record::new(0, 0, 65536, Op::Write)]);
    assert_eq!((c3.backing_read_bytes, c3.dirty_bytes_end), (0, 65536));
}

/// QA: in writethrough a write to a cached chunk hits but also goes to the origin and waits for
/// it: not a request the cache served alone (nor the cache's latency in predictions).
#[test]
fn a_writethrough_write_hit_is_not_a_request_served_by_the_cache() {
    // write chunk 0 (promoted: the cache has room), write it 4 more times, read it twice
    let mut t: Vec<Record> = (0..5u64)
        .map(|i| Record::new(i, 0, 4096, Op::Write))
        .collect();
    t.extend([read(5, 0), read(6, 0)]);
    let mut sim = Smq::new(&SmqConfig::default(), 4096, 2 * 65536, None, 1.0);
    let mut c = Counters::with_series(4096);
    for r in &t {
        sim.request(r, &mut c);
    }
    assert_eq!((c.write_blocks, c.write_hits), (5, 4));
    assert_eq!(c.backing_write_bytes, 5 * 4096);
    let windows: u64 = c.windows.iter().map(|(_, w)| w.hit_requests).sum();
    assert_eq!((c.full_hit_requests, windows), (2, 2));
}
