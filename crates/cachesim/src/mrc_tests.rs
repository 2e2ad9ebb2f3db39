//! Tests of [`super`]: the exact and SHARDS miss-ratio curves (mrc.rs would pass the
//! architecture test's 600 lines with them).

use super::*;
use crate::policy::{lru::Lru, BlockPolicy};

pub(crate) fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// Zipf-like (exponent `alpha`) over `n` extents of `extent` blocks, a block chosen
/// uniformly inside the extent: storage traces are skewed by extent (files, tables), not
/// by single blocks.
pub(crate) fn zipf_trace(len: usize, n: u64, seed: u64) -> Vec<Record> {
    zipf_extents(len, n, 0.8, 64, seed)
}

pub(crate) fn zipf_extents(len: usize, n: u64, alpha: f64, extent: u64, seed: u64) -> Vec<Record> {
    let mut cdf = Vec::with_capacity(n as usize);
    let mut s = 0.0;
    for k in 1..=n {
        s += 1.0 / (k as f64).powf(alpha);
        cdf.push(s);
    }
    let mut st = seed;
    (0..len)
        .map(|i| {
            let u = (xorshift(&mut st) >> 11) as f64 / (1u64 << 53) as f64 * s;
            let k = cdf.partition_point(|&c| c < u) as u64;
            // scatter extents over the address space so hot extents are not adjacent
            let ext = crate::hash::mix64(k) % (n * 4);
            let b = ext * extent + xorshift(&mut st) % extent;
            let op = if xorshift(&mut st).is_multiple_of(4) {
                Op::Write
            } else {
                Op::Read
            };
            Record::new(i as u64 * 1000, b * 4096, 4096, op)
        })
        .collect()
}

/// A loop over `n` blocks (LRU's worst case: all misses below n, all hits at n).
pub(crate) fn loop_trace(len: usize, n: u64) -> Vec<Record> {
    (0..len)
        .map(|i| Record::new(i as u64 * 1000, (i as u64 % n) * 4096, 4096, Op::Read))
        .collect()
}

#[test]
fn hand_computed_stack_distances() {
    // a b c a b b d a: distances - - - 3 3 1 - 3
    let mut sd = StackDistances::new();
    let got: Vec<Option<u64>> = [1u64, 2, 3, 1, 2, 2, 4, 1]
        .iter()
        .map(|&k| sd.access(k, false))
        .collect();
    assert_eq!(
        got,
        vec![None, None, None, Some(3), Some(3), Some(1), None, Some(3)]
    );
}

#[test]
fn compaction_keeps_distances() {
    // More accesses than the initial tree (4096) over 100 keys: distance stays 100.
    let mut sd = StackDistances::new();
    for i in 0..20_000u64 {
        let d = sd.access(i % 100, false);
        if i >= 100 {
            assert_eq!(d, Some(100));
        }
    }
}

#[test]
fn exact_curve_equals_lru_replay_at_every_size() {
    let trace = zipf_trace(50_000, 5_000, 7);
    let mut mrc = Mrc::build(&trace, 4096, None).unwrap();
    let sizes: Vec<u64> = [1u64, 10, 100, 500, 1000, 3000, 20_000]
        .iter()
        .map(|b| b * 4096)
        .collect();
    mrc.at(&sizes);
    for (p, &s) in mrc.points.iter().zip(&sizes) {
        let mut l = Lru::new(s / 4096);
        let hits = trace
            .iter()
            .filter(|r| l.access(r.offset / 4096, r.op == Op::Write).hit)
            .count();
        let want = 1.0 - hits as f64 / trace.len() as f64;
        assert!(
            (p.miss_ratio - want).abs() < 1e-12,
            "size {s}: mrc {} lru {want}",
            p.miss_ratio
        );
    }
}

/// Regression (QA): discards were ignored by the curve, so a block read, discarded and read
/// again hit at distance 1 in the curve (50 % misses) where the LRU replay, which drops a
/// discarded block, missed both reads (100 %). A discard now takes its blocks out of the
/// stack: the curve equals the replay at every size that holds the stack, and the reuse
/// after a discard is a miss at every size.
#[test]
fn a_discarded_block_is_a_miss_when_accessed_again() {
    let at = |off: u64, op: Op| Record::new(0, off * 4096, 4096, op);
    let trace = [at(0, Op::Read), at(0, Op::Discard), at(0, Op::Read)];
    let mut mrc = Mrc::build(&trace, 4096, None).unwrap();
    mrc.at(&[4096, 1 << 20]);
    assert_eq!(
        mrc.points.iter().map(|p| p.miss_ratio).collect::<Vec<_>>(),
        vec![1.0, 1.0]
    );
    assert_eq!(mrc.distinct_blocks, 1);
    // A Zipf trace with a discard of a recently used block every tenth request, replayed
    // by LRU (which drops discarded blocks) at sizes from the footprint up.
    let mut st = 5;
    let mut trace = Vec::new();
    for r in zipf_trace(30_000, 3_000, 3) {
        trace.push(r);
        if xorshift(&mut st).is_multiple_of(10) {
            trace.push(Record::new(r.t_ns, r.offset, 8192, Op::Discard));
        }
    }
    let mut mrc = Mrc::build(&trace, 4096, None).unwrap();
    let footprint = mrc.distinct_blocks;
    let sizes: Vec<u64> = [footprint, footprint + 1, 2 * footprint]
        .iter()
        .map(|b| b * 4096)
        .collect();
    mrc.at(&sizes);
    let data = trace.iter().filter(|r| r.op.is_data()).count();
    for (p, &s) in mrc.points.iter().zip(&sizes) {
        let mut l = Lru::new(s / 4096);
        let mut hits = 0;
        for r in &trace {
            if r.op == Op::Discard {
                for b in r.blocks(4096) {
                    l.remove(b);
                }
            } else if l.access(r.offset / 4096, r.op == Op::Write).hit {
                hits += 1;
            }
        }
        let want = 1.0 - hits as f64 / data as f64;
        assert!(
            (p.miss_ratio - want).abs() < 1e-12,
            "size {s}: mrc {} lru {want}",
            p.miss_ratio
        );
    }
}

/// Mean absolute error of the sampled curve over 200 sizes from 1/R blocks (the smallest
/// cache a sample at rate R can resolve: one sampled block stands for 1/R) to past the
/// footprint.
pub(crate) fn mae(trace: &[Record], rate: f64) -> f64 {
    let exact = Mrc::build(trace, 4096, None).unwrap();
    let shards = Mrc::build(trace, 4096, Some(rate)).unwrap();
    let lo = (1.0 / rate).ceil();
    let hi = 2.0 * exact.distinct_blocks as f64;
    let sizes: Vec<u64> = (0..200)
        .map(|i| (lo * (hi / lo).powf(i as f64 / 199.0)) as u64 * 4096)
        .collect();
    let e: f64 = sizes
        .iter()
        .map(|&s| (exact.hit_ratios(s).0 - shards.hit_ratios(s).0).abs())
        .sum();
    e / sizes.len() as f64
}

#[test]
fn shards_within_001_mae_on_zipf_and_loop() {
    // 1 % sampling needs a sample of thousands of distinct blocks and tens of thousands
    // of accesses: 2 M accesses over up to 5 M blocks (about 640 k touched).
    let z = zipf_trace(2_000_000, 20_000, 11);
    let m = mae(&z, 0.01);
    assert!(m < 0.01, "zipf MAE {m}");
    let l = loop_trace(1_000_000, 200_000);
    let m = mae(&l, 0.01);
    assert!(m < 0.01, "loop MAE {m}");
}

/// Regression (QA): `simulate`'s text showed a write miss ratio of a trace without writes as
/// `-` from the curve's count of write accesses, which the JSON left out: there the curve read
/// `write_miss_ratio: 1.0` with nothing to say that no write was seen. Both counts are in it.
#[test]
fn the_curves_json_has_its_read_and_write_counts() {
    let at = |off: u64, op: Op| Record::new(0, off * 4096, 4096, op);
    let trace = [at(0, Op::Read), at(1, Op::Read), at(0, Op::Read)];
    let mut mrc = Mrc::build(&trace, 4096, None).unwrap();
    mrc.at(&[1 << 20]);
    let v = serde_json::to_value(&mrc).unwrap();
    assert_eq!(v["read_accesses"], 3, "{v}");
    assert_eq!(v["write_accesses"], 0, "{v}");
    assert_eq!(v["points"][0]["write_miss_ratio"], 1.0, "{v}");
}
