//! A model of bcache (Documentation/admin-guide/bcache.rst; drivers/md/bcache) for what decides
//! its hit ratio and traffic:
//!
//! - **Bucketed, log-structured allocation.** Data is appended to an open bucket
//!   (`bucket_size`, make-bcache's default 1024 sectors = 512 KiB); an overwrite lands in the
//!   open bucket and invalidates the old copy. When no bucket is free, the lowest-priority
//!   clean buckets are invalidated whole, in batches of 1/64 of the buckets, like the
//!   allocator's `invalidate_buckets_lru` (priority = last hit on any block of the bucket).
//!   Buckets holding dirty data cannot be reclaimed until written back.
//! - **`sequential_cutoff`** (default 4 MB; 0 disables): like bcache, the 128 most recent
//!   requests are tracked by their end offset; a request continuing one of them adds to its
//!   sequential run, and once the run reaches the cutoff the request bypasses the cache (reads
//!   are not inserted, writes go to the backing device and invalidate cached copies). This
//!   detects each of several interleaved sequential streams.
//! - **`cache_mode`**: writethrough (the kernel's default), writeback, writearound.
//! - **Dirty cutoffs**: in writeback mode a write is cached dirty only while the share of
//!   buckets holding dirty data (`in_use`) is at most `CUTOFF_WRITEBACK` = 40 %, or at most
//!   `CUTOFF_WRITEBACK_SYNC` = 70 % for REQ_SYNC/FUA writes (bcache writeback.h,
//!   `should_writeback`); beyond that writes go through to the backing device.
//! - **Writeback drain**: dirty data is written back in offset order (bcache scans its btree by
//!   key) at the rate of bcache's PD controller: (dirty - target) / 40 s, where target =
//!   `writeback_percent` (default 10) % of the cache and 40 is `writeback_rate_p_term_inverse`
//!   (writeback.c), never below `writeback_rate_minimum` (8 sectors/s), capped by the backing
//!   device's write bandwidth when given.
//!
//! - **Garbage collection**, simplified: after every 1/16 of the cache written (btree.c's
//!   `set_gc_sectors`) or when free buckets run low (under 1/32), full buckets at most half live
//!   are compacted into the open bucket, fewest live first (moving GC), which frees fragmented
//!   buckets and lowers the share of dirty buckets the cutoffs look at.
//!
//! Not modelled (see docs/trace.md): btree/journal metadata and its space, GC's exact bucket
//! choice and timing, congestion-based bypass, readahead, per-task sequential averages, the
//! integral term of the controller and the idle-time speed-up.

use super::NIL;
use crate::hash::{map_with_capacity, FxHashMap};
use crate::simulator::{sampled, Counters, Simulator};
use crate::trace::{Op, Record};
use crate::TraceError;
use serde::Serialize;
use std::collections::{BTreeSet, VecDeque};

/// bcache's `cache_mode` values (sysfs `cache_mode`; default writethrough).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    Writethrough,
    Writeback,
    Writearound,
}

impl CacheMode {
    pub fn from_name(s: &str) -> Result<CacheMode, TraceError> {
        match s {
            "writethrough" => Ok(CacheMode::Writethrough),
            "writeback" => Ok(CacheMode::Writeback),
            "writearound" => Ok(CacheMode::Writearound),
            _ => Err(TraceError::Invalid {
                what: "cache mode",
                why: format!("{s:?}: use writethrough, writeback or writearound"),
            }),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct BcacheConfig {
    pub mode: CacheMode,
    /// make-bcache's default bucket size: 1024 sectors (512 KiB).
    pub bucket_size: u64,
    /// bcache.rst: "sequential_cutoff ... default 4 MB"; 0 disables.
    pub sequential_cutoff: u64,
    /// bcache.rst: `writeback_percent`, default 10.
    pub writeback_percent: u32,
    /// writeback.h CUTOFF_WRITEBACK.
    pub cutoff_writeback: u32,
    /// writeback.h CUTOFF_WRITEBACK_SYNC.
    pub cutoff_writeback_sync: u32,
    /// The backing device's write bandwidth available to writeback (bytes/s); `None` = no cap.
    pub drain_limit: Option<u64>,
}

impl Default for BcacheConfig {
    fn default() -> Self {
        BcacheConfig {
            mode: CacheMode::Writethrough,
            bucket_size: 512 << 10,
            sequential_cutoff: 4 << 20,
            writeback_percent: 10,
            cutoff_writeback: 40,
            cutoff_writeback_sync: 70,
            drain_limit: None,
        }
    }
}

impl BcacheConfig {
    pub fn check(&self) -> Result<(), TraceError> {
        if self.bucket_size < 4096 || !self.bucket_size.is_power_of_two() {
            return Err(TraceError::Invalid {
                what: "--bcache-bucket",
                why: format!(
                    "{} is not a power of two of at least 4 KiB; make-bcache's default is 512k",
                    self.bucket_size
                ),
            });
        }
        if self.writeback_percent > 100 {
            return Err(TraceError::Invalid {
                what: "--bcache-writeback-percent",
                why: format!("{} is over 100", self.writeback_percent),
            });
        }
        Ok(())
    }
}

/// The number of recent requests bcache tracks for sequential detection (bcache.rst: "the most
/// recent 128 IOs are tracked").
const RECENT_IO: usize = 128;
/// writeback.c: `writeback_rate_p_term_inverse` default 40 (retire the excess in 40 s).
const P_TERM_INVERSE_S: f64 = 40.0;
/// writeback.c: `writeback_rate_minimum` default 8 sectors per second.
const RATE_MINIMUM: f64 = 8.0 * 512.0;

const EMPTY: u64 = u64::MAX;

#[derive(Clone, Copy, PartialEq, Eq)]
enum BucketState {
    Free,
    Open,
    Full,
}

pub struct Bcache {
    cfg: BcacheConfig,
    block: u64,
    per_bucket: u32,
    nbuckets: u32,
    /// Block number held by each slot (bucket * per_bucket + index).
    slots: Vec<u64>,
    slot_dirty: Vec<bool>,
    map: FxHashMap<u64, u32>,
    live: Vec<u32>,
    dirty_in: Vec<u32>,
    prio: Vec<u64>,
    state: Vec<BucketState>,
    free: Vec<u32>,
    open: u32,
    fill: u32,
    dirty_buckets: u32,
    dirty_set: BTreeSet<u64>,
    cursor: u64,
    clock: u64,
    recent: VecDeque<(u64, u64)>,
    filter: Option<u64>,
    /// SHARDS rate: the drain sees sampled traffic, so its rates scale too.
    rate: f64,
    last_t: u64,
    budget: f64,
    last_drained: u64,
    in_gc: bool,
    /// Blocks written into the cache since the last GC pass.
    since_gc: u64,
}

impl Bcache {
    pub fn new(
        cfg: &BcacheConfig,
        block: u64,
        cache_bytes: u64,
        filter: Option<u64>,
        rate: f64,
    ) -> Bcache {
        let bucket = cfg.bucket_size.max(block);
        let per_bucket = (bucket / block) as u32;
        // At least 4 buckets so allocation and reclaim have room to work.
        let nbuckets = (cache_bytes / bucket).max(4) as u32;
        let nslots = nbuckets as usize * per_bucket as usize;
        let mut free: Vec<u32> = (0..nbuckets).collect();
        free.reverse();
        let open = free.pop().expect("buckets");
        let mut state = vec![BucketState::Free; nbuckets as usize];
        state[open as usize] = BucketState::Open;
        Bcache {
            cfg: cfg.clone(),
            block,
            per_bucket,
            nbuckets,
            slots: vec![EMPTY; nslots],
            slot_dirty: vec![false; nslots],
            map: map_with_capacity(nslots.min(1 << 20)),
            live: vec![0; nbuckets as usize],
            dirty_in: vec![0; nbuckets as usize],
            prio: vec![0; nbuckets as usize],
            state,
            free,
            open,
            fill: 0,
            dirty_buckets: 0,
            dirty_set: BTreeSet::new(),
            cursor: 0,
            clock: 0,
            recent: VecDeque::with_capacity(RECENT_IO),
            filter,
            rate,
            last_t: 0,
            budget: 0.0,
            last_drained: NIL as u64,
            in_gc: false,
            since_gc: 0,
        }
    }

    /// Share of buckets holding dirty data, in percent (bcache's `gc_stats.in_use` counts
    /// buckets that are neither free nor reclaimable, i.e. dirty).
    fn in_use(&self) -> u32 {
        (self.dirty_buckets as u64 * 100 / self.nbuckets as u64) as u32
    }

    fn dirty_bytes(&self) -> u64 {
        self.dirty_set.len() as u64 * self.block
    }

    /// Updates the sequential-run table; returns the run length including this request.
    fn sequential_run(&mut self, r: &Record) -> u64 {
        let end = r.end();
        let mut run = r.len as u64;
        if let Some(pos) = self.recent.iter().position(|&(e, _)| e == r.offset) {
            run += self.recent[pos].1;
            self.recent.remove(pos);
        } else if self.recent.len() == RECENT_IO {
            self.recent.pop_front();
        }
        self.recent.push_back((end, run));
        run
    }

    fn set_dirty(&mut self, slot: u32, key: u64, dirty: bool) {
        let b = (slot / self.per_bucket) as usize;
        let was = self.slot_dirty[slot as usize];
        if was == dirty {
            return;
        }
        self.slot_dirty[slot as usize] = dirty;
        if dirty {
            if self.dirty_in[b] == 0 {
                self.dirty_buckets += 1;
            }
            self.dirty_in[b] += 1;
            self.dirty_set.insert(key);
        } else {
            self.dirty_in[b] -= 1;
            if self.dirty_in[b] == 0 {
                self.dirty_buckets -= 1;
            }
            self.dirty_set.remove(&key);
        }
    }

    /// Drops a block's cached copy (overwrite elsewhere or bypassed write).
    fn invalidate(&mut self, key: u64) {
        if let Some(slot) = self.map.remove(&key) {
            self.set_dirty(slot, key, false);
            self.slots[slot as usize] = EMPTY;
            let b = (slot / self.per_bucket) as usize;
            self.live[b] -= 1;
            if self.live[b] == 0 && self.state[b] == BucketState::Full {
                self.state[b] = BucketState::Free;
                self.free.push(b as u32);
            }
        }
    }

    /// Writes back every dirty block of bucket `b` (forced, when only dirty buckets remain).
    fn flush_bucket(&mut self, b: usize, c: &mut Counters, t_ns: u64) {
        let base = b as u32 * self.per_bucket;
        for s in base..base + self.per_bucket {
            if self.slot_dirty[s as usize] {
                let key = self.slots[s as usize];
                self.set_dirty(s, key, false);
                self.count_writeback(c, t_ns, key);
            }
        }
    }

    fn count_writeback(&mut self, c: &mut Counters, t_ns: u64, key: u64) {
        let bs = self.block;
        c.cache_read_bytes += bs;
        c.backing_write_bytes += bs;
        c.writeback_bytes += bs;
        let contiguous =
            self.last_drained != NIL as u64 && key == self.last_drained.wrapping_add(1);
        self.last_drained = key;
        let w = c.window(t_ns);
        w.backing_write_bytes += bs;
        if !contiguous {
            w.backing_write_ops += 1;
        }
    }

    /// Refills the free list like bcache's allocator: invalidate the lowest-priority clean
    /// buckets, a batch at a time.
    fn reclaim(&mut self, c: &mut Counters, t_ns: u64) {
        let mut cands: Vec<(u64, u32)> = (0..self.nbuckets)
            .filter(|&b| {
                self.state[b as usize] == BucketState::Full && self.dirty_in[b as usize] == 0
            })
            .map(|b| (self.prio[b as usize], b))
            .collect();
        if cands.is_empty() {
            // Every full bucket holds dirty data: write back the coldest one first.
            let coldest = (0..self.nbuckets)
                .filter(|&b| self.state[b as usize] == BucketState::Full)
                .min_by_key(|&b| self.prio[b as usize]);
            let Some(b) = coldest else { return };
            self.flush_bucket(b as usize, c, t_ns);
            cands.push((self.prio[b as usize], b));
        }
        let batch = (self.nbuckets as usize / 64).max(1).min(cands.len());
        if batch < cands.len() {
            cands.select_nth_unstable(batch - 1);
        }
        for &(_, b) in &cands[..batch] {
            let base = b * self.per_bucket;
            for s in base..base + self.per_bucket {
                let key = self.slots[s as usize];
                if key != EMPTY {
                    self.map.remove(&key);
                    self.slots[s as usize] = EMPTY;
                }
            }
            self.live[b as usize] = 0;
            self.state[b as usize] = BucketState::Free;
            self.free.push(b);
        }
    }

    /// Appends `key` to the open bucket.
    fn insert(&mut self, key: u64, dirty: bool, c: &mut Counters, t_ns: u64) {
        self.invalidate(key);
        // GC runs after every 1/16 of the cache written (bcache btree.c, set_gc_sectors) and
        // when free buckets run low; its moving part compacts fragmented buckets.
        let low = (self.nbuckets / 32).max(2) as usize;
        let every = self.slots.len() as u64 / 16;
        if !self.in_gc
            && self.fill == self.per_bucket
            && !self.free.is_empty()
            && (self.free.len() < low || self.since_gc >= every)
        {
            self.since_gc = 0;
            self.moving_gc(c);
        }
        self.since_gc += 1;
        if self.fill == self.per_bucket {
            self.state[self.open as usize] = if self.live[self.open as usize] == 0 {
                BucketState::Free
            } else {
                BucketState::Full
            };
            if self.state[self.open as usize] == BucketState::Free {
                self.free.push(self.open);
            }
            if self.free.is_empty() {
                self.reclaim(c, t_ns);
            }
            let Some(b) = self.free.pop() else {
                return;
            };
            self.open = b;
            self.fill = 0;
            self.state[b as usize] = BucketState::Open;
            self.prio[b as usize] = self.clock;
        }
        let slot = self.open * self.per_bucket + self.fill;
        self.fill += 1;
        self.slots[slot as usize] = key;
        self.live[self.open as usize] += 1;
        self.map.insert(key, slot);
        if dirty {
            self.set_dirty(slot, key, true);
        }
    }

    /// bcache's moving GC, simplified: full buckets whose live blocks fell to half or less are
    /// compacted into the open bucket (fewest live first, while free buckets last), so
    /// fragmented buckets — and the dirty ones among them, which the allocator cannot reclaim
    /// and which count against the writeback cutoffs — become free. Costs a cache read and a
    /// cache write per moved block.
    fn moving_gc(&mut self, c: &mut Counters) {
        self.in_gc = true;
        let half = self.per_bucket / 2;
        let mut cands: Vec<(u32, u32)> = (0..self.nbuckets)
            .filter(|&b| {
                self.state[b as usize] == BucketState::Full && self.live[b as usize] <= half
            })
            .map(|b| (self.live[b as usize], b))
            .collect();
        cands.sort_unstable();
        'buckets: for &(_, b) in &cands {
            if self.state[b as usize] != BucketState::Full {
                continue;
            }
            let base = b * self.per_bucket;
            for s in base..base + self.per_bucket {
                let key = self.slots[s as usize];
                if key == EMPTY {
                    continue;
                }
                if self.fill == self.per_bucket && self.free.is_empty() {
                    break 'buckets;
                }
                let dirty = self.slot_dirty[s as usize];
                self.insert(key, dirty, c, 0);
                c.cache_read_bytes += self.block;
                c.cache_write_bytes += self.block;
            }
        }
        self.in_gc = false;
    }

    fn drain(&mut self, t_ns: u64, c: &mut Counters) {
        if self.cfg.mode != CacheMode::Writeback {
            self.last_t = t_ns;
            return;
        }
        let dt = t_ns.saturating_sub(self.last_t) as f64 / 1e9;
        self.last_t = self.last_t.max(t_ns);
        if self.dirty_set.is_empty() {
            self.budget = 0.0;
            return;
        }
        let cache_bytes = self.nbuckets as f64 * self.per_bucket as f64 * self.block as f64;
        let target = cache_bytes * self.cfg.writeback_percent as f64 / 100.0;
        let excess = self.dirty_bytes() as f64 - target;
        let mut rate = (excess / P_TERM_INVERSE_S).max(RATE_MINIMUM * self.rate);
        if let Some(limit) = self.cfg.drain_limit {
            rate = rate.min(limit as f64 * self.rate);
        }
        self.budget += rate * dt;
        while self.budget >= self.block as f64 {
            let next = self
                .dirty_set
                .range(self.cursor..)
                .next()
                .or_else(|| self.dirty_set.iter().next())
                .copied();
            let Some(key) = next else {
                self.budget = 0.0;
                break;
            };
            let slot = self.map[&key];
            self.set_dirty(slot, key, false);
            self.count_writeback(c, t_ns, key);
            self.cursor = key + 1;
            self.budget -= self.block as f64;
        }
    }
}

impl Simulator for Bcache {
    fn request(&mut self, r: &Record, c: &mut Counters) {
        self.clock += 1;
        self.drain(r.t_ns, c);
        c.requests += 1;
        let bs = self.block;
        match r.op {
            Op::Sync => {
                c.window(r.t_ns).requests += 1;
                return;
            }
            Op::Discard => {
                for b in r.blocks(bs) {
                    if self.filter.is_none_or(|t| sampled(b, t)) {
                        self.invalidate(b);
                    }
                }
                c.window(r.t_ns).requests += 1;
                return;
            }
            _ => {}
        }
        let run = self.sequential_run(r);
        let seq_bypass = self.cfg.sequential_cutoff > 0 && run >= self.cfg.sequential_cutoff;
        let write = r.op == Op::Write;
        let (mut blocks, mut hits) = (0u64, 0u64);
        let (mut to_backing_r, mut to_backing_w) = (0u64, 0u64);
        if write {
            let bypass = seq_bypass || self.cfg.mode == CacheMode::Writearound;
            let in_use = self.in_use();
            let writeback = self.cfg.mode == CacheMode::Writeback
                && !bypass
                && in_use <= self.cfg.cutoff_writeback_sync
                && (r.sync || in_use <= self.cfg.cutoff_writeback);
            for b in r.blocks(bs) {
                if self.filter.is_some_and(|t| !sampled(b, t)) {
                    continue;
                }
                blocks += 1;
                if self.map.contains_key(&b) {
                    hits += 1;
                }
                if bypass {
                    self.invalidate(b);
                    c.bypassed_bytes += bs;
                    to_backing_w += bs;
                } else if writeback {
                    self.insert(b, true, c, r.t_ns);
                    c.cache_write_bytes += bs;
                } else {
                    self.insert(b, false, c, r.t_ns);
                    c.cache_write_bytes += bs;
                    to_backing_w += bs;
                }
            }
            c.write_blocks += blocks;
            c.write_hits += hits;
        } else {
            for b in r.blocks(bs) {
                if self.filter.is_some_and(|t| !sampled(b, t)) {
                    continue;
                }
                blocks += 1;
                if let Some(&slot) = self.map.get(&b) {
                    hits += 1;
                    self.prio[(slot / self.per_bucket) as usize] = self.clock;
                    c.cache_read_bytes += bs;
                } else {
                    to_backing_r += bs;
                    if seq_bypass {
                        c.bypassed_bytes += bs;
                    } else {
                        self.insert(b, false, c, r.t_ns);
                        c.cache_write_bytes += bs;
                    }
                }
            }
            c.read_blocks += blocks;
            c.read_hits += hits;
        }
        if blocks == 0 {
            return;
        }
        c.data_requests += 1;
        c.backing_read_bytes += to_backing_r;
        c.backing_write_bytes += to_backing_w;
        if hits == blocks {
            c.full_hit_requests += 1;
        }
        let w = c.window(r.t_ns);
        w.requests += 1;
        if to_backing_r + to_backing_w < blocks * bs {
            w.cache_ops += 1;
            w.cache_bytes += blocks * bs - (to_backing_r + to_backing_w).min(blocks * bs);
        }
        if hits == blocks {
            w.hit_requests += 1;
        }
        if to_backing_r > 0 {
            w.backing_read_ops += 1;
            w.backing_read_bytes += to_backing_r;
        }
        if to_backing_w > 0 {
            w.backing_write_ops += 1;
            w.backing_write_bytes += to_backing_w;
        }
    }

    fn finish(&mut self, c: &mut Counters) {
        c.dirty_bytes_end = self.dirty_bytes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulator::ratio;

    fn run(cfg: &BcacheConfig, cache_bytes: u64, trace: &[Record]) -> Counters {
        let mut b = Bcache::new(cfg, 4096, cache_bytes, None, 1.0);
        let mut c = Counters::default();
        for r in trace {
            b.request(r, &mut c);
        }
        b.finish(&mut c);
        c
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
            mode: CacheMode::Writeback,
            bucket_size: 65536,
            sequential_cutoff: 0,
            ..BcacheConfig::default()
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
            mode: CacheMode::Writeback,
            bucket_size: 65536,
            sequential_cutoff: 0,
            ..BcacheConfig::default()
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
        let cfg = BcacheConfig {
            mode: CacheMode::Writeback,
            sequential_cutoff: 0,
            ..BcacheConfig::default()
        };
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
}
