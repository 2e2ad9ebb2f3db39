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
//!
//! The tunables ([`BcacheConfig`], [`CacheMode`]) are in `config.rs`.

mod config;

pub use config::{BcacheConfig, CacheMode};

use super::NIL;
use crate::hash::{map_with_capacity, FxHashMap};
use crate::simulator::{no_data, sampled, Counters, Simulator};
use crate::trace::{Op, Record};
use std::collections::{BTreeSet, VecDeque};
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
        let bucket = cfg.bucket_for(block);
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
            c.backing_ops += 1;
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
        let filter = self.filter;
        if no_data(r, bs, filter, c, |b| self.invalidate(b)) {
            return;
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
        // A hit is a request the cache served alone: a write that hit but went through (or
        // around) to the backing device waited for it, as a miss does (QA: writethrough
        // writes against a saturated st1 were given the cache's latency).
        let hit = hits == blocks && to_backing_r + to_backing_w == 0;
        if hit {
            c.full_hit_requests += 1;
        }
        let w = c.window(r.t_ns);
        w.requests += 1;
        if to_backing_r + to_backing_w < blocks * bs {
            w.cache_ops += 1;
            w.cache_bytes += blocks * bs - (to_backing_r + to_backing_w).min(blocks * bs);
        }
        if hit {
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
        c.backing_ops += (to_backing_r > 0) as u64 + (to_backing_w > 0) as u64;
    }

    fn finish(&mut self, c: &mut Counters) {
        c.dirty_bytes_end = self.dirty_bytes();
        // The drain writes in offset order, a run of neighbouring blocks as one operation
        // (`count_writeback`): one per run of the dirty set.
        let mut prev = None;
        c.dirty_ops_end = self
            .dirty_set
            .iter()
            .filter(|&&k| {
                let p = prev.replace(k);
                p.is_none() || p != k.checked_sub(1)
            })
            .count() as u64;
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
