use super::super::testutil::replay;
use super::*;
use crate::simulator::ratio;

fn run(cfg: &BcacheConfig, cache_bytes: u64, trace: &[Record]) -> Counters {
    replay(Bcache::new(cfg, 4096, cache_bytes, None, 1.0), trace)
}

/// Writeback with no sequential cutoff, the setting of the writeback tests.
fn writeback() -> BcacheConfig {
    BcacheConfig {
        mode: CacheMode::Writeback,
        sequential_cutoff: 0,
        ..BcacheConfig::default()
    }
}

#[test]
fn hand_computed_writethrough_hits() {
    // 4 buckets of 8 KiB (2 blocks each) = 32 KiB. Reads of blocks 0,1,2,0,1,2:
    // first pass 3 misses inserted into buckets 0 (0,1) and 1 (2); second pass 3 hits.
    let cfg = BcacheConfig {
        bucket_size: 8192,
        ..BcacheConfig::default()
    };
    let t: Vec<Record> = [0u64, 1, 2, 0, 1, 2]
        .iter()
        .enumerate()
        .map(|(i, &b)| Record::new(i as u64, b * 4096 * 10, 4096, Op::Read))
        .collect();
    let c = run(&cfg, 32768, &t);
    assert_eq!((c.read_blocks, c.read_hits), (6, 3));
    assert_eq!(c.backing_read_bytes, 3 * 4096);
    assert_eq!(c.cache_write_bytes, 3 * 4096);
}

#[test]
fn bucket_reclaim_evicts_whole_cold_buckets() {
    // 4 buckets x 2 blocks. Fill with blocks 0..8 (buckets 0..3), re-read 0 and 1
    // (bucket 0 becomes the hottest), then read 8: the free list is empty, the batch is
    // one bucket, the coldest clean full bucket is bucket 1 (blocks 2,3) -> 8 goes there
    // (bucket 3 is still open until block 8 arrives).
    let cfg = BcacheConfig {
        bucket_size: 8192,
        sequential_cutoff: 0,
        ..BcacheConfig::default()
    };
    let mut t = Vec::new();
    for b in 0..8u64 {
        t.push(Record::new(b, b * 4096, 4096, Op::Read));
    }
    t.push(Record::new(9, 0, 8192, Op::Read)); // 0,1 hit
    t.push(Record::new(10, 8 * 4096, 4096, Op::Read)); // miss, reclaim bucket 1
    t.push(Record::new(11, 2 * 4096, 4096, Op::Read)); // 2 was evicted: miss
    t.push(Record::new(12, 4 * 4096, 4096, Op::Read)); // 4 survives: hit
    let c = run(&cfg, 32768, &t);
    // hits: 0,1 and 4 = 3 of 8 + 2 + 1 + 1 + 1 = 13 block reads
    assert_eq!((c.read_blocks, c.read_hits), (13, 3));
}

#[test]
fn sequential_cutoff_bypasses_long_runs_and_zero_disables_it() {
    // 64 sequential 64 KiB reads = 4 MiB run: with the 4 MB cutoff the run reaches
    // 4 MiB only at the 64th request, so 63 requests are cached and the last bypasses.
    // Re-reading the first 1 MiB then hits.
    let mut t: Vec<Record> = (0..64u64)
        .map(|i| Record::new(i, i * 65536, 65536, Op::Read))
        .collect();
    t.extend((0..16u64).map(|i| Record::new(100 + i, i * 65536, 65536, Op::Read)));
    let cfg = BcacheConfig::default();
    let c = run(&cfg, 64 << 20, &t);
    assert_eq!(c.bypassed_bytes, 65536);
    // a bigger run: 128 requests (8 MiB): requests 64..128 bypass
    let t2: Vec<Record> = (0..128u64)
        .map(|i| Record::new(i, i * 65536, 65536, Op::Read))
        .collect();
    let c2 = run(&cfg, 64 << 20, &t2);
    assert_eq!(c2.bypassed_bytes, 65 * 65536);
    let off = BcacheConfig {
        sequential_cutoff: 0,
        ..BcacheConfig::default()
    };
    let c3 = run(&off, 64 << 20, &t2);
    assert_eq!(c3.bypassed_bytes, 0);
    assert_eq!(c3.cache_write_bytes, 8 << 20);
}

#[test]
fn writeback_accounting_and_dirty_cutoffs() {
    // 1 MiB cache of 64 KiB buckets = 16 buckets of 16 blocks. Random-ish 4 KiB writes to
    // distinct buckets' worth of data, all at t=0 (no drain time).
    let cfg = BcacheConfig {
        bucket_size: 65536,
        ..writeback()
    };
    // 128 writes of 4 KiB = 8 buckets' worth appended in order -> buckets fill with dirty
    // data. in_use = dirty buckets / 16. Writes stay dirty while in_use <= 40 % (6 of 16
    // buckets = 37 %; 7 = 43 %): the 7th bucket's first write sees in_use = 6/16 = 37 %,
    // so it goes dirty and makes 7 dirty buckets; from then on (43 % > 40 %) writes go
    // through to the backing device as clean copies.
    let t: Vec<Record> = (0..128u64)
        .map(|i| Record::new(0, i * 7 * 4096, 4096, Op::Write))
        .collect();
    let c = run(&cfg, 1 << 20, &t);
    let dirty_blocks = 6 * 16 + 1;
    assert_eq!(c.dirty_bytes_end, dirty_blocks * 4096);
    assert_eq!(c.backing_write_bytes, (128 - dirty_blocks) * 4096);
    assert_eq!(c.cache_write_bytes, 128 * 4096);
    // the same writes flagged sync stay dirty up to 70 %: 11/16 = 68 %, 12/16 = 75 %
    let ts: Vec<Record> = t.iter().map(|r| Record { sync: true, ..*r }).collect();
    let cs = run(&cfg, 1 << 20, &ts);
    assert_eq!(cs.dirty_bytes_end, 128 * 4096);
    // in writethrough every write reaches the backing device
    let wt = BcacheConfig {
        mode: CacheMode::Writethrough,
        ..cfg.clone()
    };
    let cw = run(&wt, 1 << 20, &t);
    assert_eq!(
        (cw.backing_write_bytes, cw.dirty_bytes_end),
        (128 * 4096, 0)
    );
    assert_eq!(ratio(cw.write_hits, cw.write_blocks), 0.0);
}

#[test]
fn moving_gc_keeps_random_overwrites_under_the_cutoff() {
    // 1 MiB cache of 16 buckets x 16 blocks; 5,000 sync 4 KiB writes spread over 64
    // blocks (4 buckets' worth of live data) at t = 0, so nothing drains. Appending
    // fragments every bucket; without compaction every bucket would hold a live dirty
    // block, in_use would pass 70 % and writes would go through to the backing device.
    // Moving GC packs the 64 live blocks back into few buckets: all writes stay dirty.
    let cfg = BcacheConfig {
        bucket_size: 65536,
        ..writeback()
    };
    let mut x = 12345u64;
    let t: Vec<Record> = (0..5000)
        .map(|_| {
            x = crate::hash::mix64(x);
            Record {
                sync: true,
                ..Record::new(0, (x % 64) * 4096, 4096, Op::Write)
            }
        })
        .collect();
    let c = run(&cfg, 1 << 20, &t);
    assert_eq!(c.backing_write_bytes, 0);
    assert_eq!(c.dirty_bytes_end, 64 * 4096);
    // the compaction's own traffic on the cache device: reads of moved blocks
    assert!(c.cache_read_bytes > 0);
    assert!(c.cache_write_bytes > 5000 * 4096);
}

#[test]
fn writeback_drains_over_time_at_the_controller_rate() {
    // 16 MiB cache, 4 MiB dirty written at t=0 as sync writes; target = 10 % = 1.6 MiB.
    // excess 2.4 MiB -> rate 2.4 MiB / 40 s = ~61 KiB/s. A read 10 s later lets the drain
    // run for 10 s: about 600 KiB written back (rate recomputed only at requests).
    let cfg = writeback();
    let mut t: Vec<Record> = (0..1024u64)
        .map(|i| Record {
            sync: true,
            ..Record::new(0, i * 4096, 4096, Op::Write)
        })
        .collect();
    t.push(Record::new(10_000_000_000, 100 << 20, 4096, Op::Read));
    let c = run(&cfg, 16 << 20, &t);
    let excess = 4.0 * 1048576.0 - 0.1 * 16.0 * 1048576.0;
    let expect = excess / 40.0 * 10.0;
    let got = c.writeback_bytes as f64;
    assert!(
        (got - expect).abs() <= 4096.0,
        "writeback {got} expected {expect}"
    );
    assert_eq!(c.dirty_bytes_end + c.writeback_bytes, 4 << 20);
    // capped by a slow backing device: 16 KiB/s for 10 s = 160 KiB
    let capped = BcacheConfig {
        drain_limit: Some(16384),
        ..cfg
    };
    let c2 = run(&capped, 16 << 20, &t);
    assert_eq!(c2.writeback_bytes, 160 * 1024);
}

/// Replays `trace` keeping the traffic windows (what `device::predict` reads).
fn run_with_series(cfg: &BcacheConfig, cache_bytes: u64, trace: &[Record]) -> Counters {
    let mut sim = Bcache::new(cfg, 4096, cache_bytes, None, 1.0);
    let mut c = Counters::with_series(4096);
    for r in trace {
        sim.request(r, &mut c);
    }
    sim.finish(&mut c);
    c
}

/// QA: a writethrough write whose blocks are cached still goes to the backing device and
/// waits for it, so it is a hit for the block hit ratio but not a request the cache served
/// alone (`request_hit_ratio`, and the cache's latency in predictions); in writeback it is.
#[test]
fn a_writethrough_write_hit_is_not_a_request_served_by_the_cache() {
    // 10 writes alternating over blocks 0 and 1, then 2 reads of them.
    let mut t: Vec<Record> = (0..10u64)
        .map(|i| Record::new(i, (i % 2) * 4096, 4096, Op::Write))
        .collect();
    t.push(Record::new(10, 0, 4096, Op::Read));
    t.push(Record::new(11, 4096, 4096, Op::Read));
    let served_alone = |c: &Counters| {
        let windows: u64 = c.windows.iter().map(|(_, w)| w.hit_requests).sum();
        assert_eq!(windows, c.full_hit_requests);
        c.full_hit_requests
    };
    let wt = run_with_series(&BcacheConfig::default(), 4 << 20, &t);
    // blocks: 8 of the 10 writes hit; requests: only the 2 reads were served by the cache
    assert_eq!((wt.write_blocks, wt.write_hits), (10, 8));
    assert_eq!(wt.backing_write_bytes, 10 * 4096);
    assert_eq!(served_alone(&wt), 2);
    let wb = run_with_series(&writeback(), 4 << 20, &t);
    assert_eq!((wb.write_hits, wb.backing_write_bytes), (8, 0));
    assert_eq!(served_alone(&wb), 8 + 2);
}

/// QA: 500 random 4 KiB writes a second over 50 blocks, writethrough, in front of st1 (40 MiB/s
/// with every I/O counted as 1 MiB: 40 writes a second): 99.5 % of the writes hit, but the
/// backing device saturates and every write waits for it, so the p99 is the backlog's, not the
/// cache's (it was 8.5 ms).
#[test]
fn writethrough_writes_onto_a_saturated_backing_device_get_its_latency() {
    use crate::device::{predict, DeviceModel};
    let mut x = 7u64;
    let t: Vec<Record> = (0..10_000u64)
        .map(|i| {
            x = crate::hash::mix64(x);
            Record::new(i * 2_000_000, (x % 50) * 4096, 4096, Op::Write)
        })
        .collect();
    let c = run_with_series(&BcacheConfig::default(), 1 << 30, &t);
    assert_eq!(c.write_hits, 10_000 - 50);
    // the bcache-on-EBS recipe's gp3 (3,000 IOPS, 125 MiB/s, ~1 ms: modelled) and st1 1 TiB
    // (docs/sources.md [aws-ebs-types]) without its burst
    let gp3 = DeviceModel {
        name: "gp3".into(),
        iops: 3000.0,
        bytes_per_s: 125.0 * 1048576.0,
        latency_s: 0.001,
        burst: None,
        min_io_bytes: None,
    };
    let st1 = DeviceModel {
        name: "st1".into(),
        iops: 500.0,
        bytes_per_s: 40.0 * 1048576.0,
        latency_s: 1.0 / 500.0,
        burst: None,
        min_io_bytes: Some(1 << 20),
    };
    let p = predict(&c, &gp3, &st1);
    assert!((p.max_iops_sustained - 40.0).abs() < 1e-6, "{p:?}");
    assert_eq!(p.backing_peak_utilisation, 1.0);
    assert!(p.p99_latency_s > 1.0, "{p:?}");
}
