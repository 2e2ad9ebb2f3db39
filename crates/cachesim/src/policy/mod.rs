//! Cache policies. Block-level policies ([`BlockPolicy`]: LRU, ARC, S3-FIFO) see one fixed-size
//! block at a time, with the semantics of libCacheSim for equal-size objects so hit ratios can
//! be compared exactly; the device-level models ([`bcache`], [`smq`]) see whole requests with
//! time, stream and sync flag because bypass, buckets, chunks and writeback depend on them.

pub mod arc;
pub mod bcache;
mod links;
pub mod lru;
pub mod s3fifo;
pub mod smq;

use crate::TraceError;
use serde::Serialize;

/// Index of "no node" in the arena-linked lists.
pub(crate) const NIL: u32 = u32::MAX;

/// A cache of fixed-size blocks keyed by block number.
pub trait BlockPolicy: Send {
    /// Looks `key` up; on a miss inserts it (evicting as needed). `write` marks it dirty.
    /// Returns whether it was a hit and how many dirty blocks were evicted to make room.
    fn access(&mut self, key: u64, write: bool) -> Access;
    /// Drops `key` (a discard); returns true when it was resident and dirty.
    fn remove(&mut self, key: u64) -> bool;
    /// Resident dirty blocks.
    fn dirty(&self) -> u64;
    /// Resident blocks.
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Access {
    pub hit: bool,
    pub evicted_dirty: u32,
}

impl Access {
    /// A miss that evicted `evicted_dirty` dirty blocks to make room.
    pub fn miss(evicted_dirty: u32) -> Access {
        Access {
            hit: false,
            evicted_dirty,
        }
    }
}

/// A block just put in the cache with dirty flag `block_dirty`: dirty when the access is a
/// write, counted in the policy's `dirty` total.
#[inline]
pub(crate) fn inserted(block_dirty: &mut bool, dirty: &mut u64, write: bool) {
    *block_dirty = write;
    if write {
        *dirty += 1;
    }
}

/// Stores `node` in an arena of nodes: in a slot `free` lists when there is one, else at the
/// end. Returns its index.
#[inline]
pub(crate) fn arena_insert<N>(nodes: &mut Vec<N>, free: &mut Vec<u32>, node: N) -> u32 {
    if let Some(f) = free.pop() {
        nodes[f as usize] = node;
        f
    } else {
        nodes.push(node);
        (nodes.len() - 1) as u32
    }
}

/// A resident block whose dirty flag was `block_dirty` removed from the cache (evicted, made a
/// ghost or discarded): a dirty one leaves the policy's `dirty` total. Returns whether it was
/// dirty.
#[inline]
pub(crate) fn removed(block_dirty: bool, dirty: &mut u64) -> bool {
    if block_dirty {
        *dirty -= 1;
    }
    block_dirty
}

/// A hit on a resident block whose dirty flag is `block_dirty`: a write marks it dirty, once,
/// counted in the policy's `dirty` total. Nothing is evicted.
#[inline]
pub(crate) fn hit(block_dirty: &mut bool, dirty: &mut u64, write: bool) -> Access {
    if write && !*block_dirty {
        *block_dirty = true;
        *dirty += 1;
    }
    Access {
        hit: true,
        evicted_dirty: 0,
    }
}

/// The policies `disktier simulate --policies` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyKind {
    Lru,
    Arc,
    S3fifo,
    Bcache,
    Lvmcache,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 5] = [
        PolicyKind::Lru,
        PolicyKind::Arc,
        PolicyKind::S3fifo,
        PolicyKind::Bcache,
        PolicyKind::Lvmcache,
    ];
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Lru => "lru",
            PolicyKind::Arc => "arc",
            PolicyKind::S3fifo => "s3fifo",
            PolicyKind::Bcache => "bcache",
            PolicyKind::Lvmcache => "lvmcache",
        }
    }
    pub fn from_name(s: &str) -> Result<PolicyKind, TraceError> {
        let s = s.trim().to_ascii_lowercase();
        let s = match s.as_str() {
            "s3-fifo" => "s3fifo",
            "smq" | "dm-cache" => "lvmcache",
            x => x,
        };
        PolicyKind::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| TraceError::UnknownPolicy(s.to_string()))
    }
    /// Parses a comma-separated list.
    pub fn parse_list(s: &str) -> Result<Vec<PolicyKind>, TraceError> {
        let mut v = Vec::new();
        // An empty item (`lru,,arc`) is refused, not dropped (QA: a name lost between two
        // commas went unnoticed).
        let items = disktier_units::comma_items("--policies", s).map_err(TraceError::EmptyItem)?;
        for part in items {
            let p = PolicyKind::from_name(part)?;
            if !v.contains(&p) {
                v.push(p);
            }
        }
        if v.is_empty() {
            return Err(TraceError::Invalid {
                what: "--policies",
                why: "empty list: name at least one of lru, arc, s3fifo, bcache, lvmcache".into(),
            });
        }
        Ok(v)
    }
}

/// Builds a block policy for `capacity` blocks (LRU, ARC, S3-FIFO only).
pub fn block_policy(kind: PolicyKind, capacity: u64) -> Option<Box<dyn BlockPolicy>> {
    let c = capacity.max(1);
    match kind {
        PolicyKind::Lru => Some(Box::new(lru::Lru::new(c))),
        PolicyKind::Arc => Some(Box::new(arc::Arc::new(c))),
        PolicyKind::S3fifo => Some(Box::new(s3fifo::S3Fifo::new(c))),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::BlockPolicy;
    use crate::simulator::{Counters, Simulator};
    use crate::trace::Record;

    /// Replays `trace` through a device-level model and finishes it: the counters of the run.
    pub fn replay(mut sim: impl Simulator, trace: &[Record]) -> Counters {
        let mut c = Counters::default();
        for r in trace {
            sim.request(r, &mut c);
        }
        sim.finish(&mut c);
        c
    }

    /// Replays keys ('w' suffix = write) and returns the hit pattern as a string of H/M.
    pub fn pattern(p: &mut dyn BlockPolicy, keys: &[u64]) -> String {
        keys.iter()
            .map(|&k| if p.access(k, false).hit { 'H' } else { 'M' })
            .collect()
    }
}
