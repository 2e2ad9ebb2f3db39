//! Tests of [`super`]: the device models and `predict`.

use super::*;

fn st1_1tib() -> DeviceModel {
    // docs/sources.md [aws-ebs-types]: st1 40 MiB/s per TiB baseline, 250 MiB/s per TiB burst,
    // 500 IOPS, each I/O up to 1 MiB counted as 1 MiB; a full 1 TiB bucket at 250 MiB/s net of
    // the 40 MiB/s refill lasts 1 TiB / 210 MiB/s.
    DeviceModel {
        name: "st1 1 TiB".into(),
        iops: 500.0,
        bytes_per_s: 40.0 * MIB,
        latency_s: 1.0 / 500.0,
        burst: Some(Burst {
            iops: 500.0,
            bytes_per_s: 250.0 * MIB,
            seconds: 1024.0 * 1024.0 / 210.0,
        }),
        min_io_bytes: Some(1 << 20),
    }
}

fn gp3_16k() -> DeviceModel {
    // the bcache-on-EBS recipe [recipe-bcache-ebs]: gp3 at 16,000 IOPS and 1,000 MiB/s; about 1
    // ms latency (modelled, weak).
    DeviceModel {
        name: "gp3".into(),
        iops: 16000.0,
        bytes_per_s: 1000.0 * MIB,
        latency_s: 0.001,
        burst: None,
        min_io_bytes: None,
    }
}

fn counters(hit_fraction: f64, reqs_per_s: u64, seconds: usize) -> Counters {
    let mut c = Counters::with_series(4096);
    for s in 0..seconds {
        let hits = (reqs_per_s as f64 * hit_fraction) as u64;
        let misses = reqs_per_s - hits;
        let w = c.window(s as u64 * 1_000_000_000);
        w.requests = reqs_per_s;
        w.hit_requests = hits;
        w.cache_ops = reqs_per_s;
        w.cache_bytes = reqs_per_s * 4096;
        w.backing_read_ops = misses;
        w.backing_read_bytes = misses * 4096;
    }
    c.block_bytes = 4096;
    c.data_requests = reqs_per_s * seconds as u64;
    c.read_blocks = c.data_requests;
    c.read_hits = (c.data_requests as f64 * hit_fraction) as u64;
    c.backing_read_bytes = (c.data_requests - c.read_hits) * 4096;
    c.cache_read_bytes = c.data_requests * 4096;
    c
}

#[test]
fn st1_counts_small_io_as_1_mib() {
    // 4 KiB random reads, 90 % hits: each request costs 0.1 st1 operations, each charged
    // 1 MiB: 40 MiB/s sustained -> 40 ops/s -> 400 requests/s; during the burst
    // 250 MiB/s -> 250 ops/s -> 2,500 requests/s. The gp3 cache allows 16,000.
    let c = counters(0.9, 100, 10);
    let p = predict(&c, &gp3_16k(), &st1_1tib());
    assert!(
        (p.max_iops_sustained - 400.0).abs() < 1e-6,
        "{}",
        p.max_iops_sustained
    );
    assert!(
        (p.max_iops_burst - 2500.0).abs() < 1e-6,
        "{}",
        p.max_iops_burst
    );
    // at 99.9 % hits st1 would allow 40,000 sustained: the cache's 16,000 binds
    let c = counters(0.999, 1000, 10);
    let p = predict(&c, &gp3_16k(), &st1_1tib());
    assert!(
        (p.max_iops_sustained - 16000.0).abs() < 1.0,
        "{}",
        p.max_iops_sustained
    );
}

#[test]
fn large_writeback_io_reaches_the_500_iops_cap_only_by_bandwidth() {
    // 1 MiB writes from a drain: 40 MiB/s sustained allows 40 of them a second, the burst
    // 250; st1's 500-IOPS cap would bind only for I/O under 0.5 MiB at full burst, and
    // such I/O is charged 1 MiB anyway.
    let mut c = Counters {
        data_requests: 1000,
        ..Counters::with_series(4096)
    };
    let w = c.window(0);
    w.requests = 1000;
    w.hit_requests = 1000;
    w.cache_ops = 1000;
    w.cache_bytes = 1000 * 4096;
    w.backing_write_ops = 1000;
    w.backing_write_bytes = 1000 << 20;
    c.backing_write_bytes = 1000 << 20;
    let p = predict(&c, &gp3_16k(), &st1_1tib());
    assert!(
        (p.max_iops_sustained - 40.0).abs() < 1e-6,
        "{}",
        p.max_iops_sustained
    );
    assert!((p.max_iops_burst - 250.0).abs() < 1e-6);
    // the drain needs 1000 MiB at 250 MiB/s: the second ends with 3 s of work queued
    assert!(
        (p.backing_peak_backlog_s - 3.0).abs() < 1e-6,
        "{}",
        p.backing_peak_backlog_s
    );
}

#[test]
fn overload_builds_a_backlog_and_raises_latency() {
    // Light: 10 misses/s, each charged 1 MiB on st1 (25 % of its 40 MiB/s); heavy: 2,000
    // misses/s, 2,000 MiB/s against at most 250: the backlog grows every second.
    let light = predict(&counters(0.9, 100, 5), &gp3_16k(), &st1_1tib());
    let heavy = predict(&counters(0.0, 2000, 5), &gp3_16k(), &st1_1tib());
    assert!(heavy.backing_peak_backlog_s > 1.0);
    assert!(heavy.p99_latency_s > light.p99_latency_s * 10.0);
    assert!(
        light.mean_latency_s > 0.001 && light.mean_latency_s < 0.01,
        "{}",
        light.mean_latency_s
    );
}

/// Traffic with long idle gaps: a drain onto st1 that empties its burst bucket and queues,
/// then bursts of reads days apart.
fn gappy(windows: &mut dyn FnMut(u64) -> Option<Window>) -> Counters {
    let mut c = Counters {
        data_requests: 1,
        ..Counters::with_series(4096)
    };
    for s in 0..(5 * 86_400) {
        if let Some(w) = windows(s) {
            *c.window(s * 1_000_000_000) = w;
            c.data_requests += w.requests;
        }
    }
    c
}

/// Only windows with traffic are stored; the idle seconds between them are walked as the
/// dense per-second series did (backlog worked off, credits refilled), so the prediction
/// equals the one from a series that holds every idle second explicitly, bit for bit.
#[test]
fn idle_gaps_predict_as_if_every_second_were_stored() {
    let busy = |s: u64| -> Option<Window> {
        let drain = Window {
            requests: 10,
            cache_ops: 10,
            cache_bytes: 40960,
            backing_write_ops: 300,
            backing_write_bytes: 300 << 20,
            ..Window::default()
        };
        let reads = Window {
            requests: 2000,
            hit_requests: 1500,
            cache_ops: 2000,
            cache_bytes: 2000 * 4096,
            backing_read_ops: 500,
            backing_read_bytes: 500 * 4096,
            ..Window::default()
        };
        match s {
            0..=6_000 => Some(drain),
            6_001..=6_100 => None,
            s if s % 86_400 < 30 && s > 6_100 => Some(reads),
            _ => None,
        }
    };
    let sparse = gappy(&mut |s| busy(s));
    let dense = gappy(&mut |s| Some(busy(s).unwrap_or_default()));
    assert_eq!(sparse.windows.len(), 6_001 + 4 * 30);
    assert_eq!(dense.windows.len(), 5 * 86_400);
    assert_eq!(dense.windows.width_s(), 1);
    for (cache, backing) in [(gp3_16k(), st1_1tib()), (gp3_16k(), gp3_16k())] {
        let a = predict(&sparse, &cache, &backing);
        let b = predict(&dense, &cache, &backing);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
    let p = predict(&sparse, &gp3_16k(), &st1_1tib());
    assert!(p.burst_exhausted_at_s.is_some(), "{p:?}");
    assert!(p.backing_peak_backlog_s > 1.0, "{p:?}");
}

/// Regression (QA): writes to distinct blocks absorbed by a write-back LRU larger than them
/// left every block dirty and none written back, and the pair was rated at the cache's IOPS as
/// if st1 never had to take them (`simulate` showed 3000/3000 for gp3 + st1). The writebacks
/// the dirty data still owes are charged: one st1 operation (1 MiB of its bandwidth) a request,
/// so 40 requests/s sustained, 250 while the burst lasts.
#[test]
fn dirty_data_left_at_the_end_is_charged_to_the_backing_device() {
    let mut c = counters(1.0, 100, 10);
    c.read_blocks = 0;
    c.read_hits = 0;
    c.write_blocks = c.data_requests;
    c.dirty_bytes_end = c.data_requests * 4096;
    c.dirty_ops_end = c.data_requests;
    let p = predict(&c, &gp3_16k(), &st1_1tib());
    assert!(
        (p.max_iops_sustained - 40.0).abs() < 1e-6,
        "{}",
        p.max_iops_sustained
    );
    assert!(
        (p.max_iops_burst - 250.0).abs() < 1e-6,
        "{}",
        p.max_iops_burst
    );
    // Nothing owed: the cache's 16,000 binds, as before.
    c.dirty_ops_end = 0;
    c.dirty_bytes_end = 0;
    let p = predict(&c, &gp3_16k(), &st1_1tib());
    assert!((p.max_iops_sustained - 16000.0).abs() < 1.0);
}
