//! S3-FIFO (Yang et al., SOSP'23): a small FIFO (10 % of the cache) that filters one-hit
//! wonders, a main FIFO with 2-bit frequency reinsertion (CLOCK-like), and a ghost FIFO of
//! recently evicted keys (90 % of the cache in entries) that sends returning keys straight to
//! main. Parameters and tie-breaks follow libCacheSim's defaults: an object leaves the small
//! FIFO for main when it was hit at least twice (`move-to-main-threshold=2`), main evicts when
//! it is over its share or small is empty, and before the first eviction new objects overflow
//! into main instead of pushing small's oldest out.

use super::{arena_insert, hit, removed, Access, BlockPolicy};
use crate::hash::{map_with_capacity, FxHashMap};
use std::collections::VecDeque;

const TOMBSTONE: u64 = u64::MAX;

#[derive(Clone, Copy)]
struct Node {
    key: u64,
    freq: u8,
    main: bool,
    dirty: bool,
}

pub struct S3Fifo {
    small_cap: u64,
    main_cap: u64,
    ghost_cap: u64,
    map: FxHashMap<u64, u32>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    small: VecDeque<u32>,
    main: VecDeque<u32>,
    small_len: u64,
    main_len: u64,
    /// Ghost keys with the sequence number of their insertion (stale entries are skipped).
    ghost: VecDeque<(u64, u64)>,
    ghost_map: FxHashMap<u64, u64>,
    ghost_seq: u64,
    has_evicted: bool,
    dirty: u64,
}

/// The next live node of `queue` and its index; the tombstones removals left before it are
/// freed on the way.
fn pop_live(nodes: &[Node], free: &mut Vec<u32>, queue: &mut VecDeque<u32>) -> Option<(u32, Node)> {
    while let Some(i) = queue.pop_front() {
        let n = nodes[i as usize];
        if n.key != TOMBSTONE {
            return Some((i, n));
        }
        free.push(i);
    }
    None
}

impl S3Fifo {
    pub fn new(c: u64) -> S3Fifo {
        // libCacheSim: small = (int64)(c * 0.1), main = c - small, ghost = (int64)(c * 0.9).
        let small_cap = (c as f64 * 0.1) as u64;
        let pre = c.min(1 << 20) as usize;
        S3Fifo {
            small_cap,
            main_cap: c - small_cap,
            ghost_cap: (c as f64 * 0.9) as u64,
            map: map_with_capacity(pre),
            nodes: Vec::with_capacity(pre),
            free: Vec::new(),
            small: VecDeque::new(),
            main: VecDeque::new(),
            small_len: 0,
            main_len: 0,
            ghost: VecDeque::new(),
            ghost_map: map_with_capacity(pre),
            ghost_seq: 0,
            has_evicted: false,
            dirty: 0,
        }
    }

    fn cap(&self) -> u64 {
        self.small_cap + self.main_cap
    }

    fn ghost_insert(&mut self, key: u64) {
        if self.ghost_cap == 0 {
            return;
        }
        self.ghost_seq += 1;
        self.ghost.push_back((key, self.ghost_seq));
        self.ghost_map.insert(key, self.ghost_seq);
        while self.ghost_map.len() as u64 > self.ghost_cap {
            let Some((k, s)) = self.ghost.pop_front() else {
                break;
            };
            if self.ghost_map.get(&k) == Some(&s) {
                self.ghost_map.remove(&k);
            }
        }
        // Bound the queue of stale entries too.
        if self.ghost.len() as u64 > 2 * self.ghost_cap + 16 {
            let gm = &self.ghost_map;
            self.ghost.retain(|(k, s)| gm.get(k) == Some(s));
        }
    }

    fn free_node(&mut self, i: u32) -> u32 {
        let n = self.nodes[i as usize];
        self.map.remove(&n.key);
        self.free.push(i);
        u32::from(removed(n.dirty, &mut self.dirty))
    }

    fn evict_small(&mut self) -> u32 {
        while let Some((i, n)) = pop_live(&self.nodes, &mut self.free, &mut self.small) {
            self.small_len -= 1;
            if n.freq >= 2 {
                self.nodes[i as usize].main = true;
                self.nodes[i as usize].freq = 0;
                self.main.push_back(i);
                self.main_len += 1;
            } else {
                self.ghost_insert(n.key);
                return self.free_node(i);
            }
        }
        0
    }

    fn evict_main(&mut self) -> u32 {
        while let Some((i, n)) = pop_live(&self.nodes, &mut self.free, &mut self.main) {
            if n.freq >= 1 {
                self.nodes[i as usize].freq = n.freq.min(3) - 1;
                self.main.push_back(i);
            } else {
                self.main_len -= 1;
                return self.free_node(i);
            }
        }
        0
    }

    fn evict(&mut self) -> u32 {
        self.has_evicted = true;
        if self.main_len > self.main_cap || self.small_len == 0 {
            self.evict_main()
        } else {
            self.evict_small()
        }
    }
}

impl BlockPolicy for S3Fifo {
    fn access(&mut self, key: u64, write: bool) -> Access {
        if let Some(&i) = self.map.get(&key) {
            let n = &mut self.nodes[i as usize];
            n.freq = n.freq.saturating_add(1);
            return hit(&mut n.dirty, &mut self.dirty, write);
        }
        let from_ghost = self.ghost_map.remove(&key).is_some();
        let mut evicted_dirty = 0;
        while self.small_len + self.main_len >= self.cap() && self.small_len + self.main_len > 0 {
            evicted_dirty += self.evict();
        }
        let to_main = from_ghost
            || self.small_cap == 0
            || (!self.has_evicted && self.small_len >= self.small_cap);
        let node = Node {
            key,
            freq: 0,
            main: to_main,
            dirty: write,
        };
        let i = arena_insert(&mut self.nodes, &mut self.free, node);
        if to_main {
            self.main.push_back(i);
            self.main_len += 1;
        } else {
            self.small.push_back(i);
            self.small_len += 1;
        }
        if write {
            self.dirty += 1;
        }
        self.map.insert(key, i);
        Access::miss(evicted_dirty)
    }

    fn remove(&mut self, key: u64) -> bool {
        self.ghost_map.remove(&key);
        let Some(i) = self.map.remove(&key) else {
            return false;
        };
        let n = self.nodes[i as usize];
        // Leave a tombstone in its FIFO; the slot is freed when the FIFO reaches it.
        self.nodes[i as usize].key = TOMBSTONE;
        if n.main {
            self.main_len -= 1;
        } else {
            self.small_len -= 1;
        }
        removed(n.dirty, &mut self.dirty)
    }

    fn dirty(&self) -> u64 {
        self.dirty
    }
    fn len(&self) -> u64 {
        self.small_len + self.main_len
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::pattern;
    use super::*;

    #[test]
    fn hand_computed_s3fifo() {
        // c = 10: small 1, main 9, ghost 9.
        // 1..=9 miss; before the first eviction small fills with 1, then 2..=9 overflow to main
        // (small=[1], main=[2..9], 9 resident).
        // 10 M: resident 9 < 10, small full, no eviction yet -> main (main=[2..10]).
        // 11 M: full -> evict: main 9 = cap, small 1 > 0 -> evict small: 1 has freq 0 -> ghost.
        //       11 into small.
        // 1 M (in ghost): evict: small=[11] -> 11 to ghost; 1 into main (main=[2..10,1]).
        // 2 H (freq 1). 12 M: full -> main 10 > 9 -> evict main: 2 has freq 1 -> reinsert
        //       with freq 0; 3 freq 0 -> evicted. 12 into small.
        // 3 M: 3 is not in ghost (main evictions do not go to ghost) -> evict: main 9 = cap,
        //       small [12] -> 12 to ghost; 3 into small.
        // 2 H. Total: 2 hits of 16.
        let mut s = S3Fifo::new(10);
        let keys = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1, 2, 12, 3, 2];
        assert_eq!(pattern(&mut s, &keys), "MMMMMMMMMMMMHMMH");
        assert_eq!(s.len(), 10);
    }

    #[test]
    fn one_hit_wonders_do_not_flush_the_hot_set() {
        let mut keys = Vec::new();
        for round in 0..200u64 {
            keys.extend(0..5u64);
            keys.push(10_000 + round);
        }
        let mut s = S3Fifo::new(10);
        let hits = pattern(&mut s, &keys).matches('H').count();
        // after warm-up every hot access hits
        assert!(hits >= 5 * 190, "{hits}");
    }
}
