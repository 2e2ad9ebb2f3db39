//! Replays a trace through cache policies and sizes: hit ratios (reads and writes apart), the
//! bytes each request moves to and from the cache and the backing device, and per-second
//! traffic windows that [`crate::device`] turns into predicted performance.
//!
//! Accounting is block-granular: a request touching part of a block counts the whole block.
//! Block-level policies (LRU, ARC, S3-FIFO) run write-allocate, write-back: a write miss
//! inserts the block dirty, a dirty block pays one backing write when evicted, and blocks
//! still dirty at the end are reported as `dirty_bytes_end`. Syncs move no data; discards
//! drop the blocks from the cache.

use crate::policy::bcache::Bcache;
use crate::policy::smq::Smq;
use crate::policy::{block_policy, BlockPolicy, PolicyKind};
pub use crate::simconfig::{parse_sizes, scaled_bytes, SimConfig, MAX_CACHE_BLOCKS};
// The counters and the Simulator trait lived here before `simulator`; kept for `sim::X` paths.
use crate::mrc::MrcBuilder;
use crate::sample::{SampleTally, Tally};
use crate::simulator::no_data;
pub use crate::simulator::{
    check_rate, ratio, sampled, sampled_rate, threshold, Counters, Series, Simulator, Window,
};
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
        // A read miss is one backing read; each evicted dirty block one backing write.
        let read_miss = (misses > 0 && !write) as u64;
        c.backing_ops += read_miss + evicted_dirty;
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
        // An evicted dirty block costs one backing write (above): so does each one left.
        c.dirty_ops_end = self.policy.dirty();
    }
}

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
    /// Reads and writes of at least a byte in the trace (without syncs, discards and empty
    /// requests).
    #[serde(skip)]
    pub trace_data_requests: u64,
    pub trace_seconds: f64,
    pub block_bytes: u64,
    pub sample: Option<f64>,
    /// With `sample`: the trace's block accesses and the sample's (`block_accesses`,
    /// `sampled_block_accesses` in JSON), which [`SampleTally::warning`] weighs.
    #[serde(flatten)]
    pub sample_tally: Option<SampleTally>,
    pub results: Vec<PolicyResult>,
}

/// Builds the simulator for one policy and size; `rate` scales the cache for SHARDS.
pub fn build(cfg: &SimConfig, kind: PolicyKind, cache_bytes: u64) -> Box<dyn Simulator> {
    let rate = cfg.sample.unwrap_or(1.0);
    let filter = cfg.sample.map(threshold);
    // Miniature simulation: a sampled trace sees a cache scaled by the same rate.
    let scaled = scaled_bytes(cfg, cache_bytes);
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
/// trace's requests; `full_data_requests`: its reads and writes of at least a byte).
fn result(
    cfg: &SimConfig,
    kind: PolicyKind,
    size: u64,
    mut c: Counters,
    (full_requests, full_data_requests): (u64, u64),
) -> Result<PolicyResult, TraceError> {
    if let Some(asked) = cfg.sample {
        let rate = sampled_rate(asked);
        // Requests and operations scale by the trace's data requests over the sample's (see
        // `Counters::scale`): the ratios among them are the sample's, their sum the trace's.
        let per_request = if c.data_requests == 0 {
            1.0 / rate
        } else {
            full_data_requests as f64 / c.data_requests as f64
        };
        c.scale(1.0 / rate, per_request).map_err(|v| TraceError::Invalid {
            what: "--sample",
            why: format!(
                "{} at {}: a sampled figure of {v} scaled by 1/{asked} passes 2^64; use a larger rate",
                kind.name(),
                size
            ),
        })?;
        c.requests = full_requests;
    }
    Ok(PolicyResult {
        policy: kind,
        cache_bytes: size,
        hit_ratio: c.hit_ratio(),
        read_hit_ratio: c.read_hit_ratio(),
        write_hit_ratio: c.write_hit_ratio(),
        request_hit_ratio: ratio(c.full_hit_requests, c.data_requests),
        counters: c,
    })
}

/// Replays `trace` through one policy at one size, scaled up for sampling.
#[cfg(test)]
fn replay(cfg: &SimConfig, kind: PolicyKind, size: u64, trace: &[Record]) -> PolicyResult {
    let c = simulate_one(trace, cfg, kind, size);
    let data = trace.iter().filter(|r| r.op.is_data() && r.len > 0).count();
    result(cfg, kind, size, c, (trace.len() as u64, data as u64)).unwrap()
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

/// Replays an in-memory `trace` once per (policy, size): [`simulate_stream`] over it, keeping
/// no traffic windows.
pub fn simulate(cfg: &SimConfig, trace: &[Record]) -> Result<SimReport, TraceError> {
    simulate_stream(cfg, trace.iter().map(|r| Ok(*r)), None, false)
}

/// Replays `records` through every (policy, size) in one pass: the records are read once and
/// each chunk goes to every replay ([`crate::stream`]), so memory does not grow with the
/// trace's length, and the replays run on threads ([`stream::layout_for`]). `curve`, when given, is
/// built in the same pass. The results keep the order of the (policy, size) list and equal
/// those of one replay per (policy, size) on one thread. A read error ends the pass and is
/// returned. `seconds` covers reading and replaying. `series`: keep each replay's traffic
/// windows ([`Counters::windows`]) for [`crate::device::predict`]; without predictions they
/// are not needed and cost memory.
pub fn simulate_stream<I>(
    cfg: &SimConfig,
    records: I,
    curve: Option<&mut MrcBuilder>,
    series: bool,
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
                windows: Series::new(series),
                ..Counters::default()
            },
        })
        .collect();
    let mut consumers: Vec<&mut dyn Consumer> =
        jobs.iter_mut().map(|j| j as &mut dyn Consumer).collect();
    if let Some(c) = curve {
        consumers.push(c);
    }
    // With --sample, how many of the trace's block accesses the sample holds (the policies'
    // figures stand for the trace only when that is about N·R).
    let mut tally = cfg.sample.map(|r| Tally::new(cfg.block, r));
    let records = records.inspect(|r| {
        if let (Some(t), Ok(r)) = (tally.as_mut(), r) {
            t.add(r);
        }
    });
    let layout = stream::layout_for(consumers.len());
    let pass = stream::run(records, consumers, layout)?;
    let results: Vec<PolicyResult> = jobs
        .into_iter()
        .map(|mut j| {
            j.sim.finish(&mut j.c);
            result(cfg, j.kind, j.size, j.c, (pass.records, pass.data_records))
        })
        .collect::<Result<_, _>>()?;
    let replayed = pass.records * results.len() as u64;
    let seconds = start.elapsed().as_secs_f64();
    Ok(SimReport {
        requests: replayed,
        seconds,
        requests_per_second: replayed as f64 / seconds.max(1e-9),
        trace_requests: pass.records,
        trace_data_requests: pass.data_records,
        trace_seconds: pass.max_t_ns as f64 / 1e9,
        block_bytes: cfg.block,
        sample: cfg.sample,
        sample_tally: tally.map(|t| t.tally),
        results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::bcache::BcacheConfig;
    use crate::policy::smq::SmqConfig;

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
        // QA: an empty item was dropped, so a size lost between two commas went unnoticed.
        for (list, flag) in [("1GiB,,4GiB", "--cache-sizes"), ("lru,", "--policies")] {
            let e = if flag == "--policies" {
                crate::policy::PolicyKind::parse_list(list).unwrap_err()
            } else {
                parse_sizes(list).unwrap_err()
            };
            assert!(
                e.to_string()
                    .starts_with(&format!("{flag} {list:?}: item 2 is empty")),
                "{e}"
            );
        }
        // Thousands of sizes would be thousands of caches in memory at once.
        let list = |n: u64| {
            (1..=n)
                .map(|i| (i << 20).to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        assert_eq!(parse_sizes(&list(64)).unwrap().len(), 64);
        let err = parse_sizes(&list(2000)).unwrap_err().to_string();
        assert!(
            err.contains("2000 sizes") && err.contains("at most 64"),
            "{err}"
        );
        // A doubling range over the whole u64 stays within the bound.
        assert!(parse_sizes("512..8EiB").unwrap().len() <= 64);
    }

    /// Regression (QA): a range up to 2^64 - 1 (`1GiB..18446744073709551615`) doubled to
    /// 2^63, saturated at 2^64 - 1, which was still within the range, and pushed it for ever:
    /// `simulate` grew to the memory limit and aborted. The range now ends at its upper end.
    #[test]
    fn a_range_up_to_2_64_ends() {
        let v = parse_sizes("1GiB..18446744073709551615").unwrap();
        assert_eq!(v.len(), 35, "{v:?}");
        assert_eq!(v[33], 1 << 63);
        assert_eq!(v[34], u64::MAX);
        assert_eq!(parse_sizes("512..18446744073709551615").unwrap().len(), 56);
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

    /// Regression (QA): `--policies lru --block 128KiB` was refused with "invalid --lvm-chunk:
    /// 65536 is not a multiple of --block 131072", lvmcache's default chunk, though lvmcache
    /// was not asked for (and `plan --trace-block 128KiB` named an option plan lacks). Each
    /// model's settings are checked only when it runs.
    #[test]
    fn a_models_settings_are_checked_only_when_it_runs() {
        let mut cfg = SimConfig {
            block: 128 << 10,
            policies: vec![PolicyKind::Lru, PolicyKind::Arc, PolicyKind::S3fifo],
            sizes: vec![64 << 20],
            sample: None,
            bcache: BcacheConfig {
                bucket_size: 1000,
                ..BcacheConfig::default()
            },
            smq: SmqConfig::default(),
        };
        cfg.check().unwrap();
        cfg.policies.push(PolicyKind::Lvmcache);
        let e = cfg.check().unwrap_err().to_string();
        assert!(
            e.contains("--lvm-chunk: 65536 is not a multiple of --block 131072"),
            "{e}"
        );
        cfg.policies = vec![PolicyKind::Bcache];
        let e = cfg.check().unwrap_err().to_string();
        assert!(e.contains("--bcache-bucket"), "{e}");
    }
}

#[cfg(test)]
mod threaded_tests {
    use super::*;
    use crate::policy::bcache::BcacheConfig;
    use crate::policy::smq::SmqConfig;

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
