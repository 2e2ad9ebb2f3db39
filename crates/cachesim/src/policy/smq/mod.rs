//! A model of lvmcache's default dm-cache policy, smq (stochastic multiqueue), at chunk
//! granularity, as far as Documentation/admin-guide/device-mapper/cache-policies.rst and the
//! smq commit message describe it:
//!
//! - The cache is divided into chunks (`--chunk`, lvm's cache-smq profile uses
//!   `cache_pool_chunk_size = 64` KiB); a chunk is cached or not as a whole.
//! - Cached chunks live in a 64-level multiqueue with separate clean and dirty queues. smq
//!   "does not maintain a hit count, instead it swaps hit entries with the least recently used
//!   entry from the level above"; demotion takes the least recently used entry of the lowest
//!   level of the clean queue, and dirty entries are written back before they can be demoted.
//! - Promotion is decided by a **hotspot queue** that tracks larger regions ("each hotspot
//!   block covers a larger area than a single cache block") with a quarter as many entries as
//!   the cache, also a 64-level multiqueue with swap-on-hit. A missed chunk is promoted when the
//!   cache still has free chunks, or when its region is among the hottest quarter of the
//!   hotspot queue by level (about as many regions as the cache can hold) and was hit at least
//!   once; writes need one level more (smq favours promoting reads). The kernel derives its
//!   promote levels from the same cache-to-hotspot ratio and then adapts them to how well the
//!   hotspot queue performs; disktier keeps the ratio rule and skips the adaptation.
//! - Promotion copies the whole chunk from the origin to the cache, except for a write that
//!   covers the whole chunk (no read needed, as dm-cache does for an overwritten block).
//! - Modes: writethrough (lvm's profile default) writes hits to both devices; writeback keeps
//!   them dirty. Dirty chunks are cleaned in the background at `drain_limit` bytes/s when
//!   given (dm-cache cleans when the device is idle), otherwise only when demoted.
//!
//! Not modelled: the per-tick hit limiting, sentinel-based aging, `migration_threshold`
//! bandwidth limits, and the adaptive promote levels.
//!
//! The multiqueue both the cache and the hotspot queue are built on is in `multiqueue.rs`.

mod multiqueue;

use crate::policy::bcache::CacheMode;
use crate::simulator::{sampled, Counters, Simulator};
use crate::trace::{Op, Record};
use crate::TraceError;
use multiqueue::{MultiQueue, LEVELS};
use serde::Serialize;

/// Chunks per hotspot region.
const HOTSPOT_CHUNKS: u64 = 16;
/// The cache holds 1/HOTSPOT_CHUNKS as many regions as it has chunks and the hotspot queue
/// tracks a quarter as many regions as the cache has chunks, so the regions the cache can hold
/// are the hottest quarter of the hotspot queue: reads promote from there.
const HOT_SHARE: f64 = 0.25;
/// Writes need one level more than reads (smq favours promoting reads).
const WRITE_EXTRA_LEVEL: u8 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct SmqConfig {
    /// lvm cache-smq.profile: `cache_pool_chunk_size = 64` (KiB).
    pub chunk_size: u64,
    /// lvm cache-smq.profile: `cache_mode = "writethrough"`.
    pub mode: CacheMode,
    /// Background cleaning bandwidth (bytes/s); `None`: dirty chunks are written back only when
    /// demoted.
    pub drain_limit: Option<u64>,
}

impl Default for SmqConfig {
    fn default() -> Self {
        SmqConfig {
            chunk_size: 64 << 10,
            mode: CacheMode::Writethrough,
            drain_limit: None,
        }
    }
}

impl SmqConfig {
    pub fn check(&self, block: u64) -> Result<(), TraceError> {
        // dm-cache: chunk sizes from 32 KiB to 1 GiB, multiples of 32 KiB (cache.rst).
        if self.chunk_size < (32 << 10)
            || !self.chunk_size.is_multiple_of(32 << 10)
            || self.chunk_size > (1 << 30)
        {
            return Err(TraceError::Invalid {
                what: "--lvm-chunk",
                why: format!(
                    "{} bytes: dm-cache chunks are 32 KiB to 1 GiB in multiples of 32 KiB",
                    self.chunk_size
                ),
            });
        }
        if !self.chunk_size.is_multiple_of(block) {
            return Err(TraceError::Invalid {
                what: "--lvm-chunk",
                why: format!("{} is not a multiple of --block {block}", self.chunk_size),
            });
        }
        if self.mode == CacheMode::Writearound {
            return Err(TraceError::Invalid {
                what: "--lvm-mode",
                why: "dm-cache has writethrough and writeback (and passthrough), not writearound"
                    .into(),
            });
        }
        Ok(())
    }
}

const CLEAN: u8 = 0;
const DIRTY: u8 = 1;

pub struct Smq {
    cfg: SmqConfig,
    block: u64,
    chunk: u64,
    cache: MultiQueue,
    hotspot: MultiQueue,
    filter: Option<u64>,
    rate: f64,
    last_t: u64,
    budget: f64,
    dirty: u64,
}

impl Smq {
    pub fn new(
        cfg: &SmqConfig,
        block: u64,
        cache_bytes: u64,
        filter: Option<u64>,
        rate: f64,
    ) -> Smq {
        let chunks = (cache_bytes / cfg.chunk_size).max(1);
        Smq {
            cfg: cfg.clone(),
            block,
            chunk: cfg.chunk_size,
            cache: MultiQueue::new(2, chunks),
            // "uses a quarter of the entries"
            hotspot: MultiQueue::new(1, (chunks / 4).max(16)),
            filter,
            rate,
            last_t: 0,
            budget: 0.0,
            dirty: 0,
        }
    }

    fn writeback(&mut self, i: u32, c: &mut Counters, t_ns: u64) {
        self.cache.move_queue(i, CLEAN);
        self.dirty -= 1;
        c.cache_read_bytes += self.chunk;
        c.backing_write_bytes += self.chunk;
        c.writeback_bytes += self.chunk;
        c.backing_ops += 1;
        let w = c.window(t_ns);
        w.backing_write_ops += 1;
        w.backing_write_bytes += self.chunk;
    }

    fn drain(&mut self, t_ns: u64, c: &mut Counters) {
        let dt = t_ns.saturating_sub(self.last_t) as f64 / 1e9;
        self.last_t = self.last_t.max(t_ns);
        let Some(limit) = self.cfg.drain_limit else {
            return;
        };
        if self.dirty == 0 {
            self.budget = 0.0;
            return;
        }
        self.budget += limit as f64 * self.rate * dt;
        while self.budget >= self.chunk as f64 {
            let Some(v) = self.cache.victim(DIRTY) else {
                self.budget = 0.0;
                break;
            };
            self.writeback(v, c, t_ns);
            self.budget -= self.chunk as f64;
        }
    }

    /// Makes room for one chunk; returns false if nothing can be demoted.
    fn demote(&mut self, c: &mut Counters, t_ns: u64) {
        if let Some(v) = self.cache.victim(CLEAN) {
            self.cache.remove(v);
        } else if let Some(v) = self.cache.victim(DIRTY) {
            self.writeback(v, c, t_ns);
            self.cache.remove(v);
        }
    }

    /// The lowest hotspot level whose regions, with all above it, are at most the hottest
    /// [`HOT_SHARE`] of the queue (at least level 1: a region must have been hit).
    fn promote_level(&self) -> u8 {
        let budget = (self.hotspot.len() as f64 * HOT_SHARE).max(1.0) as u64;
        let mut above = 0u64;
        for l in (1..LEVELS as u8).rev() {
            let n = self.hotspot.lists[MultiQueue::li(CLEAN, l)].len;
            if above + n > budget {
                return l + 1;
            }
            above += n;
        }
        1
    }

    /// Updates the hotspot queue for `chunk`'s region; returns the region's level.
    fn touch_hotspot(&mut self, chunk: u64) -> u8 {
        let region = chunk / HOTSPOT_CHUNKS;
        if let Some(&i) = self.hotspot.map.get(&region) {
            self.hotspot.hit(i);
            return self.hotspot.nodes[i as usize].level;
        }
        if self.hotspot.len() >= self.hotspot.cap {
            if let Some(v) = self.hotspot.victim(CLEAN) {
                self.hotspot.remove(v);
            }
        }
        let i = self.hotspot.insert_cold(region, CLEAN, 0);
        self.hotspot.rebalance(CLEAN);
        self.hotspot.nodes[i as usize].level
    }

    /// One request's blocks inside one chunk.
    fn chunk_access(
        &mut self,
        r: &Record,
        chunk: u64,
        blocks: u64,
        c: &mut Counters,
        acct: &mut ReqAcct,
    ) {
        let bs = self.block;
        let write = r.op == Op::Write;
        let bytes = blocks * bs;
        if let Some(&i) = self.cache.map.get(&chunk) {
            self.cache.hit(i);
            acct.hits += blocks;
            if write {
                c.cache_write_bytes += bytes;
                acct.cache += bytes;
                if self.cfg.mode == CacheMode::Writeback {
                    if self.cache.nodes[i as usize].queue == CLEAN {
                        self.cache.move_queue(i, DIRTY);
                        self.dirty += 1;
                    }
                } else {
                    acct.backing_w += bytes;
                }
            } else {
                c.cache_read_bytes += bytes;
                acct.cache += bytes;
            }
            return;
        }
        let level = self.touch_hotspot(chunk);
        let free = self.cache.len() < self.cache.cap;
        let need = self.promote_level() + if write { WRITE_EXTRA_LEVEL } else { 0 };
        if !(free || level >= need) {
            if write {
                acct.backing_w += bytes;
            } else {
                acct.backing_r += bytes;
            }
            return;
        }
        if !free {
            self.demote(c, r.t_ns);
        }
        // Promotion: copy the chunk from the origin unless this write covers all of it.
        let whole = write && blocks * bs == self.chunk;
        if !whole {
            acct.backing_r += self.chunk;
        }
        c.cache_write_bytes += self.chunk;
        acct.promotions += 1;
        let dirty = write && self.cfg.mode == CacheMode::Writeback;
        self.cache.insert(
            chunk,
            if dirty { DIRTY } else { CLEAN },
            level.min(LEVELS as u8 - 1),
        );
        if dirty {
            self.dirty += 1;
        } else if write {
            acct.backing_w += bytes;
        }
    }
}

#[derive(Default)]
struct ReqAcct {
    blocks: u64,
    hits: u64,
    cache: u64,
    backing_r: u64,
    backing_w: u64,
    promotions: u64,
}

impl Simulator for Smq {
    fn request(&mut self, r: &Record, c: &mut Counters) {
        self.drain(r.t_ns, c);
        c.requests += 1;
        let bs = self.block;
        let per_chunk = self.chunk / bs;
        match r.op {
            Op::Sync => {
                c.no_data_request(r.t_ns);
                return;
            }
            Op::Discard => {
                // dm-cache tracks discarded origin blocks; a discarded chunk need not be kept.
                let first = r.offset.div_ceil(self.chunk);
                let last = r.end() / self.chunk;
                for ch in first..last {
                    if self.filter.is_some_and(|t| !sampled(ch, t)) {
                        continue;
                    }
                    if let Some(&i) = self.cache.map.get(&ch) {
                        if self.cache.nodes[i as usize].queue == DIRTY {
                            self.dirty -= 1;
                        }
                        self.cache.remove(i);
                    }
                }
                c.no_data_request(r.t_ns);
                return;
            }
            _ => {}
        }
        let mut acct = ReqAcct::default();
        let blocks = r.blocks(bs);
        let mut b = blocks.start;
        while b < blocks.end {
            let chunk = b / per_chunk;
            let chunk_end = ((chunk + 1) * per_chunk).min(blocks.end);
            let n = chunk_end - b;
            b = chunk_end;
            if self.filter.is_some_and(|t| !sampled(chunk, t)) {
                continue;
            }
            acct.blocks += n;
            self.chunk_access(r, chunk, n, c, &mut acct);
        }
        if acct.blocks == 0 {
            return;
        }
        c.data_requests += 1;
        if r.op == Op::Write {
            c.write_blocks += acct.blocks;
            c.write_hits += acct.hits;
        } else {
            c.read_blocks += acct.blocks;
            c.read_hits += acct.hits;
        }
        c.backing_read_bytes += acct.backing_r;
        c.backing_write_bytes += acct.backing_w;
        // A writethrough write that hit still waited for the origin: not a hit for latency.
        let hit = acct.hits == acct.blocks && acct.backing_r + acct.backing_w == 0;
        if hit {
            c.full_hit_requests += 1;
        }
        let w = c.window(r.t_ns);
        w.requests += 1;
        if acct.cache > 0 || acct.promotions > 0 {
            w.cache_ops += 1 + acct.promotions;
            w.cache_bytes += acct.cache + acct.promotions * self.chunk;
        }
        if hit {
            w.hit_requests += 1;
        }
        if acct.backing_r > 0 {
            w.backing_read_ops += 1;
            w.backing_read_bytes += acct.backing_r;
        }
        if acct.backing_w > 0 {
            w.backing_write_ops += 1;
            w.backing_write_bytes += acct.backing_w;
        }
        c.backing_ops += (acct.backing_r > 0) as u64 + (acct.backing_w > 0) as u64;
    }

    fn finish(&mut self, c: &mut Counters) {
        c.dirty_bytes_end = self.dirty * self.chunk;
        // Each dirty chunk is one writeback, as `writeback` counts it.
        c.dirty_ops_end = self.dirty;
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
