//! What every simulated cache shares: the [`Simulator`] interface, the [`Counters`] it fills
//! (with per-second [`Window`]s), and SHARDS' sampling rule. The replay loop ([`crate::sim`])
//! and the request-level policies (bcache, dm-cache's smq) depend on this module, not on each
//! other.

use crate::hash::mix64;
use crate::trace::{Op, Record};
use serde::Serialize;

/// Traffic in one second of trace time.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Window {
    pub requests: u64,
    pub cache_ops: u64,
    pub cache_bytes: u64,
    pub backing_read_ops: u64,
    pub backing_read_bytes: u64,
    pub backing_write_ops: u64,
    pub backing_write_bytes: u64,
    /// Requests served entirely by the cache.
    pub hit_requests: u64,
}

/// What one policy at one size did with a trace.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counters {
    pub requests: u64,
    pub read_blocks: u64,
    pub read_hits: u64,
    pub write_blocks: u64,
    pub write_hits: u64,
    /// Data requests all of whose blocks hit.
    pub full_hit_requests: u64,
    pub data_requests: u64,
    pub cache_read_bytes: u64,
    pub cache_write_bytes: u64,
    pub backing_read_bytes: u64,
    pub backing_write_bytes: u64,
    /// Bytes that went around the cache (bcache's sequential cutoff, writearound).
    pub bypassed_bytes: u64,
    /// Bytes written back from the cache to the backing device (evictions and drain).
    pub writeback_bytes: u64,
    pub dirty_bytes_end: u64,
    /// The simulation's block size.
    #[serde(skip)]
    pub block_bytes: u64,
    #[serde(skip)]
    pub windows: Vec<Window>,
}

impl Counters {
    #[inline]
    pub fn window(&mut self, t_ns: u64) -> &mut Window {
        let s = (t_ns / 1_000_000_000) as usize;
        if s >= self.windows.len() {
            // Very long idle gaps are not worth a window per second: cap at 10 days.
            let s = s.min(864_000);
            self.windows.resize(s + 1, Window::default());
            return &mut self.windows[s];
        }
        &mut self.windows[s]
    }
    pub fn hit_ratio(&self) -> f64 {
        ratio(
            self.read_hits + self.write_hits,
            self.read_blocks + self.write_blocks,
        )
    }
    pub fn read_hit_ratio(&self) -> f64 {
        ratio(self.read_hits, self.read_blocks)
    }
    pub fn write_hit_ratio(&self) -> f64 {
        ratio(self.write_hits, self.write_blocks)
    }
    /// Multiplies every counter by `k` (SHARDS-sampled runs scale back to the full trace).
    pub(crate) fn scale(&mut self, k: f64) {
        let s = |v: &mut u64| *v = (*v as f64 * k).round() as u64;
        for v in [
            &mut self.requests,
            &mut self.read_blocks,
            &mut self.read_hits,
            &mut self.write_blocks,
            &mut self.write_hits,
            &mut self.full_hit_requests,
            &mut self.data_requests,
            &mut self.cache_read_bytes,
            &mut self.cache_write_bytes,
            &mut self.backing_read_bytes,
            &mut self.backing_write_bytes,
            &mut self.bypassed_bytes,
            &mut self.writeback_bytes,
            &mut self.dirty_bytes_end,
        ] {
            s(v);
        }
        for w in &mut self.windows {
            for v in [
                &mut w.requests,
                &mut w.cache_ops,
                &mut w.cache_bytes,
                &mut w.backing_read_ops,
                &mut w.backing_read_bytes,
                &mut w.backing_write_ops,
                &mut w.backing_write_bytes,
                &mut w.hit_requests,
            ] {
                s(v);
            }
        }
    }
}

pub fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// A cache model that consumes whole requests.
pub trait Simulator: Send {
    fn request(&mut self, r: &Record, c: &mut Counters);
    /// End of trace: report what is still dirty.
    fn finish(&mut self, c: &mut Counters);
}

/// Counts a request that carries no data, a sync or a discard (calling `discard` on each of a
/// discard's blocks that `filter` keeps), and returns true; false for a read or a write, which
/// the simulator replays itself.
#[inline]
pub fn no_data(
    r: &Record,
    block: u64,
    filter: Option<u64>,
    c: &mut Counters,
    mut discard: impl FnMut(u64),
) -> bool {
    match r.op {
        Op::Sync => {}
        Op::Discard => {
            for b in r.blocks(block) {
                if filter.is_none_or(|t| sampled(b, t)) {
                    discard(b);
                }
            }
        }
        _ => return false,
    }
    c.window(r.t_ns).requests += 1;
    true
}

/// SHARDS' sampling test: keep a block when `hash(block) mod 2^24 < threshold`.
#[inline]
pub fn sampled(block: u64, threshold: u64) -> bool {
    (mix64(block) & ((1 << 24) - 1)) < threshold
}

/// The SHARDS threshold for a rate in (0, 1].
pub fn threshold(rate: f64) -> u64 {
    ((rate * (1u64 << 24) as f64).round() as u64).clamp(1, 1 << 24)
}
