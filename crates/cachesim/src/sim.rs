//! Replays a trace through cache policies and sizes: hit ratios (reads and writes apart), the
//! bytes each request moves to and from the cache and the backing device, and per-second
//! traffic windows that [`crate::device`] turns into predicted performance.
//!
//! Accounting is block-granular: a request touching part of a block counts the whole block.
//! Block-level policies (LRU, ARC, S3-FIFO) run write-allocate, write-back: a write miss
//! inserts the block dirty, a dirty block pays one backing write when evicted, and blocks
//! still dirty at the end are reported as `dirty_bytes_end`. Syncs move no data; discards
//! drop the blocks from the cache.

use crate::policy::bcache::{Bcache, BcacheConfig};
use crate::policy::smq::{Smq, SmqConfig};
use crate::policy::{block_policy, BlockPolicy, PolicyKind};
// The counters and the Simulator trait lived here before `simulator`; kept for `sim::X` paths.
use crate::mrc::MrcBuilder;
use crate::simulator::no_data;
pub use crate::simulator::{ratio, sampled, threshold, Counters, Simulator, Window};
use crate::stream::{self, Consumer};
use crate::trace::{Op, Record};
use crate::TraceError;
use serde::Serialize;
use std::time::Instant;

/// Adapts a [`BlockPolicy`] to whole requests.
pub struct BlockSim {
    policy: Box<dyn BlockPolicy>,
    block: u64,
    /// SHARDS spatial filter: only blocks whose hash is below this threshold are simulated.
    filter: Option<u64>,
}

impl BlockSim {
    pub fn new(policy: Box<dyn BlockPolicy>, block: u64, filter: Option<u64>) -> BlockSim {
        BlockSim {
            policy,
            block,
            filter,
        }
    }
}

impl Simulator for BlockSim {
    #[inline]
    fn request(&mut self, r: &Record, c: &mut Counters) {
        let bs = self.block;
        c.requests += 1;
        let policy = &mut self.policy;
        if no_data(r, bs, self.filter, c, |b| {
            policy.remove(b);
        }) {
            return;
        }
        let write = r.op == Op::Write;
        let (mut blocks, mut hits, mut evicted_dirty) = (0u64, 0u64, 0u64);
        for b in r.blocks(bs) {
            if self.filter.is_some_and(|t| !sampled(b, t)) {
                continue;
            }
            let a = self.policy.access(b, write);
            blocks += 1;
            hits += a.hit as u64;
            evicted_dirty += a.evicted_dirty as u64;
        }
        if blocks == 0 {
            return;
        }
        c.data_requests += 1;
        let misses = blocks - hits;
        if write {
            c.write_blocks += blocks;
            c.write_hits += hits;
            c.cache_write_bytes += blocks * bs;
        } else {
            c.read_blocks += blocks;
            c.read_hits += hits;
            c.cache_read_bytes += hits * bs;
            // A read miss is read from the backing device and filled into the cache.
            c.backing_read_bytes += misses * bs;
            c.cache_write_bytes += misses * bs;
        }
        // Evicted dirty blocks are read from the cache and written to the backing device.
        c.cache_read_bytes += evicted_dirty * bs;
        c.backing_write_bytes += evicted_dirty * bs;
        c.writeback_bytes += evicted_dirty * bs;
        let w = c.window(r.t_ns);
        w.requests += 1;
        w.cache_ops += 1;
        w.cache_bytes += blocks * bs;
        if misses == 0 {
            w.hit_requests += 1;
        } else if !write {
            w.backing_read_ops += 1;
            w.backing_read_bytes += misses * bs;
        }
        if evicted_dirty > 0 {
            w.backing_write_ops += evicted_dirty;
            w.backing_write_bytes += evicted_dirty * bs;
        }
        if misses == 0 {
            c.full_hit_requests += 1;
        }
    }

    fn finish(&mut self, c: &mut Counters) {
        c.dirty_bytes_end = self.policy.dirty() * self.block;
    }
}

/// The checked configuration of a simulation.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub block: u64,
    pub policies: Vec<PolicyKind>,
    pub sizes: Vec<u64>,
    /// SHARDS rate in (0, 1]; `None` replays every block.
    pub sample: Option<f64>,
    pub bcache: BcacheConfig,
    pub smq: SmqConfig,
}

impl SimConfig {
    pub fn check(&self) -> Result<(), TraceError> {
        if self.block == 0 || !self.block.is_power_of_two() || self.block < 512 {
            return Err(TraceError::Invalid {
                what: "--block",
                why: format!(
                    "{} is not a power of two of at least 512 bytes; try 4KiB",
                    self.block
                ),
            });
        }
        if self.sizes.is_empty() {
            return Err(TraceError::Invalid {
                what: "--cache-sizes",
                why: "no sizes: give a list (1GiB,2GiB) or a range (1GiB..64GiB)".into(),
            });
        }
        if let Some(&s) = self.sizes.iter().find(|&&s| s < self.block) {
            return Err(TraceError::Invalid {
                what: "--cache-sizes",
                why: format!("{s} bytes is smaller than one {}-byte block", self.block),
            });
        }
        // Each policy keeps a few words per cached block (bcache a slot per block of its
        // buckets): the cache in blocks, scaled by the SHARDS rate, bounds its memory.
        let rate = self.sample.filter(|r| *r > 0.0 && *r <= 1.0).unwrap_or(1.0);
        if let Some(&s) = self
            .sizes
            .iter()
            .find(|&&s| (s / self.block) as f64 * rate > MAX_CACHE_BLOCKS as f64)
        {
            return Err(TraceError::Invalid {
                what: "--cache-sizes",
                why: format!(
                    "{s} bytes is more than {MAX_CACHE_BLOCKS} blocks of {} bytes, past the simulators' memory bound (docs/trace.md): pass --sample (e.g. 0.01) or a larger --block",
                    self.block
                ),
            });
        }
        if let Some(r) = self.sample {
            if !(r > 0.0 && r <= 1.0) {
                return Err(TraceError::Invalid {
                    what: "--sample",
                    why: format!("{r} is not a rate in (0, 1]; 0.01 samples 1 % of blocks"),
                });
            }
        }
        self.bcache.check()?;
        self.smq.check(self.block)?;
        Ok(())
    }
}

impl SimConfig {
    /// Checks the sizes against the device-level models: bcache needs at least 4 buckets,
    /// lvmcache one chunk. (Separate from [`SimConfig::check`] because a hit-ratio curve asks
    /// for sizes only later.)
    pub fn check_sizes(&self) -> Result<(), TraceError> {
        if self.policies.contains(&PolicyKind::Bcache) {
            // The model needs a few buckets to allocate from and reclaim into.
            let min = 4 * self.bcache.bucket_size;
            if let Some(&s) = self.sizes.iter().find(|&&s| s < min) {
                return Err(TraceError::Invalid {
                    what: "--cache-sizes",
                    why: format!(
                        "{s} bytes holds fewer than 4 bcache buckets of {} bytes: use larger sizes or a smaller --bcache-bucket",
                        self.bcache.bucket_size
                    ),
                });
            }
        }
        if self.policies.contains(&PolicyKind::Lvmcache) {
            if let Some(&s) = self.sizes.iter().find(|&&s| s < self.smq.chunk_size) {
                return Err(TraceError::Invalid {
                    what: "--cache-sizes",
                    why: format!("{s} bytes is smaller than one lvmcache chunk of {} bytes: use larger sizes or a smaller --lvm-chunk", self.smq.chunk_size),
                });
            }
        }
        Ok(())
    }
}

/// The most blocks one simulated cache may hold (after SHARDS sampling): 2^24, 64 GiB at 4 KiB
/// blocks, about 1 GiB of memory per cache for the policies' maps and lists (docs/trace.md).
pub const MAX_CACHE_BLOCKS: u64 = 1 << 24;

/// One row of the result.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyResult {
    pub policy: PolicyKind,
    pub cache_bytes: u64,
    pub hit_ratio: f64,
    pub read_hit_ratio: f64,
    pub write_hit_ratio: f64,
    /// Fraction of data requests served entirely from the cache.
    pub request_hit_ratio: f64,
    #[serde(flatten)]
    pub counters: Counters,
}

impl PolicyResult {
    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }
}

/// The whole result: rows plus the replay's own speed.
#[derive(Debug, Clone, Serialize)]
pub struct SimReport {
    /// Requests replayed, summed over every (policy, size) pass.
    pub requests: u64,
    pub seconds: f64,
    pub requests_per_second: f64,
    pub trace_requests: u64,
    pub trace_seconds: f64,
    pub block_bytes: u64,
    pub sample: Option<f64>,
    pub results: Vec<PolicyResult>,
}

/// Builds the simulator for one policy and size; `rate` scales the cache for SHARDS.
pub fn build(cfg: &SimConfig, kind: PolicyKind, cache_bytes: u64) -> Box<dyn Simulator> {
    let rate = cfg.sample.unwrap_or(1.0);
    let filter = cfg.sample.map(threshold);
    // Miniature simulation: a sampled trace sees a cache scaled by the same rate.
    let scaled = ((cache_bytes as f64 * rate) as u64).max(cfg.block);
    match kind {
        PolicyKind::Bcache => Box::new(Bcache::new(&cfg.bcache, cfg.block, scaled, filter, rate)),
        PolicyKind::Lvmcache => Box::new(Smq::new(&cfg.smq, cfg.block, scaled, filter, rate)),
        k => Box::new(BlockSim::new(
            block_policy(k, scaled / cfg.block).expect("block policy"),
            cfg.block,
            filter,
        )),
    }
}

/// Replays `trace` through one policy at one size: its counters as replayed (not scaled up
/// for sampling).
pub fn simulate_one(trace: &[Record], cfg: &SimConfig, kind: PolicyKind, bytes: u64) -> Counters {
    let mut sim = build(cfg, kind, bytes);
    let mut c = Counters {
        block_bytes: cfg.block,
        ..Counters::default()
    };
    for r in trace {
        sim.request(r, &mut c);
    }
    sim.finish(&mut c);
    c
}

/// A result row from one replay's counters, scaled up for sampling (`full_requests`: the
/// trace's requests).
fn result(
    cfg: &SimConfig,
    kind: PolicyKind,
    size: u64,
    mut c: Counters,
    full_requests: u64,
) -> PolicyResult {
    if let Some(rate) = cfg.sample {
        c.scale(1.0 / rate);
        c.requests = full_requests;
    }
    PolicyResult {
        policy: kind,
        cache_bytes: size,
        hit_ratio: c.hit_ratio(),
        read_hit_ratio: c.read_hit_ratio(),
        write_hit_ratio: c.write_hit_ratio(),
        request_hit_ratio: ratio(c.full_hit_requests, c.data_requests),
        counters: c,
    }
}

/// Replays `trace` through one policy at one size, scaled up for sampling.
#[cfg(test)]
fn replay(cfg: &SimConfig, kind: PolicyKind, size: u64, trace: &[Record]) -> PolicyResult {
    let c = simulate_one(trace, cfg, kind, size);
    result(cfg, kind, size, c, trace.len() as u64)
}

/// One (policy, size) replay, fed by a one-pass stream.
struct Job {
    kind: PolicyKind,
    size: u64,
    sim: Box<dyn Simulator>,
    c: Counters,
}

impl Consumer for Job {
    fn take(&mut self, chunk: &[Record]) {
        for r in chunk {
            self.sim.request(r, &mut self.c);
        }
    }
}

/// Replays an in-memory `trace` once per (policy, size): [`simulate_stream`] over it.
pub fn simulate(cfg: &SimConfig, trace: &[Record]) -> Result<SimReport, TraceError> {
    simulate_stream(cfg, trace.iter().map(|r| Ok(*r)), None)
}

/// Replays `records` through every (policy, size) in one pass: the records are read once and
/// each chunk goes to every replay ([`crate::stream`]), so memory does not grow with the
/// trace's length, and the replays run on threads ([`stream::layout_for`]). `curve`, when given, is
/// built in the same pass. The results keep the order of the (policy, size) list and equal
/// those of one replay per (policy, size) on one thread. A read error ends the pass and is
/// returned. `seconds` covers reading and replaying.
pub fn simulate_stream<I>(
    cfg: &SimConfig,
    records: I,
    curve: Option<&mut MrcBuilder>,
) -> Result<SimReport, TraceError>
where
    I: Iterator<Item = Result<Record, TraceError>>,
{
    cfg.check()?;
    cfg.check_sizes()?;
    let start = Instant::now();
    let mut jobs: Vec<Job> = cfg
        .policies
        .iter()
        .flat_map(|&k| cfg.sizes.iter().map(move |&s| (k, s)))
        .map(|(kind, size)| Job {
            kind,
            size,
            sim: build(cfg, kind, size),
            c: Counters {
                block_bytes: cfg.block,
                ..Counters::default()
            },
        })
        .collect();
    let mut consumers: Vec<&mut dyn Consumer> =
        jobs.iter_mut().map(|j| j as &mut dyn Consumer).collect();
    if let Some(c) = curve {
        consumers.push(c);
    }
    let layout = stream::layout_for(consumers.len());
    let pass = stream::run(records, consumers, layout)?;
    let results: Vec<PolicyResult> = jobs
        .into_iter()
        .map(|mut j| {
            j.sim.finish(&mut j.c);
            result(cfg, j.kind, j.size, j.c, pass.records)
        })
        .collect();
    let replayed = pass.records * results.len() as u64;
    let seconds = start.elapsed().as_secs_f64();
    Ok(SimReport {
        requests: replayed,
        seconds,
        requests_per_second: replayed as f64 / seconds.max(1e-9),
        trace_requests: pass.records,
        trace_seconds: pass.max_t_ns as f64 / 1e9,
        block_bytes: cfg.block,
        sample: cfg.sample,
        results,
    })
}

/// Parses `--cache-sizes`: a comma list (`1GiB,2GiB`) or a doubling range (`1GiB..64GiB`).
pub fn parse_sizes(s: &str) -> Result<Vec<u64>, TraceError> {
    let bad = |why: String| TraceError::Invalid {
        what: "--cache-sizes",
        why,
    };
    let one =
        |p: &str| disktier_units::parse_size(p.trim()).map_err(|e| bad(format!("{p:?}: {e}")));
    if let Some((a, b)) = s.split_once("..") {
        let (lo, hi) = (one(a)?, one(b)?);
        if lo == 0 || lo > hi {
            return Err(bad(format!(
                "range {s:?} must go from a non-zero size up to a larger one"
            )));
        }
        let mut v = Vec::new();
        let mut x = lo;
        while x <= hi {
            v.push(x);
            x = x.saturating_mul(2);
        }
        if *v.last().expect("non-empty") != hi {
            v.push(hi);
        }
        return Ok(v);
    }
    let mut v = Vec::new();
    for p in s.split(',').filter(|p| !p.trim().is_empty()) {
        v.push(one(p)?);
    }
    v.sort_unstable();
    v.dedup();
    if v.is_empty() {
        return Err(bad("empty list".into()));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_as_lists_and_doubling_ranges() {
        assert_eq!(
            parse_sizes("1GiB..8GiB").unwrap(),
            vec![1 << 30, 2 << 30, 4 << 30, 8 << 30]
        );
        assert_eq!(
            parse_sizes("1GiB..3GiB").unwrap(),
            vec![1 << 30, 2 << 30, 3 << 30]
        );
        assert_eq!(parse_sizes("2GiB,1GiB").unwrap(), vec![1 << 30, 2 << 30]);
        assert!(parse_sizes("8GiB..1GiB").is_err());
        assert!(parse_sizes("lots").is_err());
    }

    #[test]
    fn block_sim_accounts_bytes_per_device() {
        // 4 KiB blocks, LRU of 2 blocks.
        // W 0..8K: 2 write misses, dirty, 8K to the cache.
        // R 0..4K: hit, 4K from the cache.
        // R 8K..16K: 2 read misses: 8K from backing, 8K filled into the cache; evicts blocks
        //   0 and 1, both dirty: 8K read from the cache and written to the backing device.
        let cfg = SimConfig {
            block: 4096,
            policies: vec![PolicyKind::Lru],
            sizes: vec![8192],
            sample: None,
            bcache: BcacheConfig::default(),
            smq: SmqConfig::default(),
        };
        let trace = vec![
            Record::new(0, 0, 8192, Op::Write),
            Record::new(1, 0, 4096, Op::Read),
            Record::new(2, 8192, 8192, Op::Read),
        ];
        let rep = simulate(&cfg, &trace).unwrap();
        let c = &rep.results[0].counters;
        assert_eq!(
            (c.write_blocks, c.write_hits, c.read_blocks, c.read_hits),
            (2, 0, 3, 1)
        );
        assert_eq!(c.cache_write_bytes, 8192 + 8192);
        assert_eq!(c.cache_read_bytes, 4096 + 8192);
        assert_eq!(c.backing_read_bytes, 8192);
        assert_eq!(c.backing_write_bytes, 8192);
        assert_eq!(c.dirty_bytes_end, 0);
        assert!((rep.results[0].hit_ratio - 0.2).abs() < 1e-12);
        assert!((rep.results[0].request_hit_ratio - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn sampled_replay_tracks_the_full_replay() {
        // Miniature simulation: 10 % of blocks, caches scaled by 0.1, counters scaled back.
        let trace = crate::mrc::tests::zipf_trace(400_000, 5_000, 3);
        let mut cfg = SimConfig {
            block: 4096,
            policies: vec![PolicyKind::Lru, PolicyKind::Arc, PolicyKind::S3fifo],
            sizes: vec![8 << 20, 64 << 20, 256 << 20],
            sample: None,
            bcache: BcacheConfig::default(),
            smq: SmqConfig::default(),
        };
        let full = simulate(&cfg, &trace).unwrap();
        cfg.sample = Some(0.1);
        let mini = simulate(&cfg, &trace).unwrap();
        for (f, m) in full.results.iter().zip(&mini.results) {
            assert!(
                (f.hit_ratio - m.hit_ratio).abs() < 0.03,
                "{:?} {}: full {} sampled {}",
                f.policy,
                f.cache_bytes,
                f.hit_ratio,
                m.hit_ratio
            );
            let (fb, mb) = (
                f.counters.backing_read_bytes as f64,
                m.counters.backing_read_bytes as f64,
            );
            assert!((fb - mb).abs() / fb < 0.1, "backing reads {fb} vs {mb}");
        }
    }

    #[test]
    fn bad_configs_are_rejected_with_the_option_named() {
        let mut cfg = SimConfig {
            block: 3000,
            policies: vec![PolicyKind::Lru],
            sizes: vec![1 << 20],
            sample: None,
            bcache: BcacheConfig::default(),
            smq: SmqConfig::default(),
        };
        assert!(cfg.check().unwrap_err().to_string().contains("--block"));
        cfg.block = 4096;
        cfg.sample = Some(1.5);
        assert!(cfg.check().unwrap_err().to_string().contains("--sample"));
    }
}

#[cfg(test)]
mod threaded_tests {
    use super::*;

    /// The threaded `simulate` gives, in (policy, size) order, what one replay per (policy,
    /// size) on this thread gives.
    #[test]
    fn threaded_replays_equal_sequential_ones_in_order() {
        let trace = crate::mrc::tests::zipf_trace(200_000, 20_000, 7);
        let cfg = SimConfig {
            block: 4096,
            policies: vec![PolicyKind::Lru, PolicyKind::Arc, PolicyKind::S3fifo],
            sizes: vec![4096 * 100, 4096 * 1_000, 4096 * 10_000],
            sample: None,
            bcache: BcacheConfig::default(),
            smq: SmqConfig::default(),
        };
        let report = simulate(&cfg, &trace).unwrap();
        assert_eq!(report.results.len(), 9);
        assert_eq!(report.requests, 9 * trace.len() as u64);
        let mut i = 0;
        for &kind in &cfg.policies {
            for &size in &cfg.sizes {
                let want = replay(&cfg, kind, size, &trace);
                let got = &report.results[i];
                assert_eq!((got.policy, got.cache_bytes), (kind, size));
                assert_eq!(got.counters.read_hits, want.counters.read_hits);
                assert_eq!(got.counters.write_hits, want.counters.write_hits);
                assert_eq!(got.hit_ratio.to_bits(), want.hit_ratio.to_bits());
                i += 1;
            }
        }
        // The sizes differ, so the results must too (a shuffled order would fail above).
        assert!(report.results[0].hit_ratio < report.results[2].hit_ratio);
    }
}
