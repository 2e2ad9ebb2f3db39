//! Least-recently-used over fixed-size blocks: nodes in a `Vec` arena hold the blocks and an
//! intrusive doubly-linked list, and a hash table indexes them by block. The table holds only
//! 4-byte node numbers (it compares a candidate's block in the node it already has to load on a
//! hit), the nodes are 16 bytes and the dirty flags a bit each, so a cache of a million blocks
//! keeps about 22 MiB of state in all: fewer cache lines per request than a map of
//! block to node beside the nodes. A request costs one table lookup and a few index writes and
//! allocates nothing once the arena is full.

use super::links::{Linked, Links, List};
use super::{Access, BlockPolicy};
use hashbrown::HashTable;

#[derive(Clone, Copy)]
struct Node {
    key: u64,
    links: Links,
}

impl Linked for Node {
    fn links(&mut self) -> &mut Links {
        &mut self.links
    }
}

pub struct Lru {
    cap: u64,
    /// Node numbers, hashed by their node's block.
    table: HashTable<u32>,
    nodes: Vec<Node>,
    /// One bit per node: dirty.
    dirty_bits: Vec<u64>,
    free: Vec<u32>,
    /// Head: most recently used; tail: least recently used, the next victim.
    list: List,
    dirty: u64,
}

/// rustc's FxHash of one word (block numbers are already well spread; hashbrown takes its
/// 7-bit tag from the top bits, which the multiplication mixes).
#[inline]
fn hash(key: u64) -> u64 {
    key.wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}

impl Lru {
    pub fn new(cap: u64) -> Lru {
        // Reserve up to 1 Mi entries up front; larger caches grow as they fill.
        let pre = cap.min(1 << 20) as usize;
        Lru {
            cap,
            table: HashTable::with_capacity(pre),
            nodes: Vec::with_capacity(pre),
            dirty_bits: Vec::with_capacity(pre.div_ceil(64)),
            free: Vec::new(),
            list: List::EMPTY,
            dirty: 0,
        }
    }

    #[inline]
    fn unlink(&mut self, i: u32) {
        self.list.unlink(&mut self.nodes, i);
    }

    #[inline]
    fn push_front(&mut self, i: u32) {
        self.list.push_front(&mut self.nodes, i);
    }

    #[inline]
    fn is_dirty(&self, i: u32) -> bool {
        self.dirty_bits[i as usize / 64] >> (i % 64) & 1 == 1
    }

    /// Sets node `i`'s dirty bit to `d`, keeping the count of dirty blocks.
    #[inline]
    fn set_dirty(&mut self, i: u32, d: bool) {
        let (w, b) = (i as usize / 64, i % 64);
        let was = self.dirty_bits[w] >> b & 1 == 1;
        if was != d {
            self.dirty_bits[w] ^= 1 << b;
            if d {
                self.dirty += 1;
            } else {
                self.dirty -= 1;
            }
        }
    }

    /// Takes node `i` out of the table (its block need not be compared: the number is unique).
    #[inline]
    fn forget(&mut self, i: u32) {
        let key = self.nodes[i as usize].key;
        if let Ok(e) = self.table.find_entry(hash(key), |&j| j == i) {
            e.remove();
        }
    }
}

impl BlockPolicy for Lru {
    #[inline]
    fn access(&mut self, key: u64, write: bool) -> Access {
        let nodes = &self.nodes;
        if let Some(&i) = self
            .table
            .find(hash(key), |&j| nodes[j as usize].key == key)
        {
            if self.list.head != i {
                self.unlink(i);
                self.push_front(i);
            }
            // A write hit marks the block dirty, once; a read leaves it as it was.
            if write {
                self.set_dirty(i, true);
            }
            return Access {
                hit: true,
                evicted_dirty: 0,
            };
        }
        let mut evicted_dirty = 0;
        let i = if self.table.len() as u64 >= self.cap {
            // Reuse the victim's node: no allocation in the steady state.
            let v = self.list.tail;
            self.unlink(v);
            self.forget(v);
            if self.is_dirty(v) {
                evicted_dirty = 1;
            }
            v
        } else if let Some(f) = self.free.pop() {
            f
        } else {
            self.nodes.push(Node {
                key,
                links: Links::NONE,
            });
            let n = self.nodes.len() - 1;
            if n.is_multiple_of(64) {
                self.dirty_bits.push(0);
            }
            n as u32
        };
        self.nodes[i as usize].key = key;
        // A block enters dirty when written, clean when read.
        self.set_dirty(i, write);
        self.push_front(i);
        let nodes = &self.nodes;
        self.table
            .insert_unique(hash(key), i, |&j| hash(nodes[j as usize].key));
        Access::miss(evicted_dirty)
    }

    fn remove(&mut self, key: u64) -> bool {
        let nodes = &self.nodes;
        let Ok(e) = self
            .table
            .find_entry(hash(key), |&j| nodes[j as usize].key == key)
        else {
            return false;
        };
        let (i, _) = e.remove();
        self.unlink(i);
        self.free.push(i);
        let d = self.is_dirty(i);
        self.set_dirty(i, false);
        d
    }

    fn dirty(&self) -> u64 {
        self.dirty
    }
    fn len(&self) -> u64 {
        self.table.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::pattern;
    use super::*;

    #[test]
    fn hand_computed_lru() {
        // capacity 3; trace 1 2 3 1 4 2 5 1 2 3
        // 1 M [1]; 2 M [2 1]; 3 M [3 2 1]; 1 H [1 3 2]; 4 M evicts 2 [4 1 3];
        // 2 M evicts 3 [2 4 1]; 5 M evicts 1 [5 2 4]; 1 M evicts 4 [1 5 2];
        // 2 H [2 1 5]; 3 M evicts 5 [3 2 1]  -> 2 hits of 10
        let mut l = Lru::new(3);
        assert_eq!(
            pattern(&mut l, &[1, 2, 3, 1, 4, 2, 5, 1, 2, 3]),
            "MMMHMMMMHM"
        );
        assert_eq!(l.len(), 3);
    }

    #[test]
    fn dirty_blocks_are_counted_on_eviction() {
        // capacity 2: write 1, write 2, read 3 evicts 1 (dirty), read 4 evicts 2 (dirty),
        // read 5 evicts 3 (clean)
        let mut l = Lru::new(2);
        l.access(1, true);
        l.access(2, true);
        assert_eq!(l.dirty(), 2);
        assert_eq!(l.access(3, false).evicted_dirty, 1);
        assert_eq!(l.access(4, false).evicted_dirty, 1);
        assert_eq!(l.access(5, false).evicted_dirty, 0);
        assert_eq!(l.dirty(), 0);
        // a discard of a resident block frees its slot
        assert!(!l.remove(4));
        assert_eq!(l.len(), 1);
        assert!(l.access(5, false).hit);
    }

    /// A plain LRU (a vector, most recent last) to check the arena and table against.
    struct Plain {
        cap: usize,
        v: Vec<(u64, bool)>,
    }

    impl Plain {
        fn access(&mut self, key: u64, write: bool) -> Access {
            if let Some(p) = self.v.iter().position(|e| e.0 == key) {
                let (k, d) = self.v.remove(p);
                self.v.push((k, d || write));
                return Access {
                    hit: true,
                    evicted_dirty: 0,
                };
            }
            let mut ev = 0;
            if self.v.len() >= self.cap {
                ev = self.v.remove(0).1 as u32;
            }
            self.v.push((key, write));
            Access::miss(ev)
        }
        fn remove(&mut self, key: u64) -> bool {
            match self.v.iter().position(|e| e.0 == key) {
                Some(p) => self.v.remove(p).1,
                None => false,
            }
        }
    }

    #[test]
    fn equals_a_plain_lru_on_random_accesses_writes_and_removes() {
        // xorshift, so the test needs no crate and fails the same way every time.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for cap in [1u64, 2, 3, 17, 64, 65, 200] {
            let mut l = Lru::new(cap);
            let mut p = Plain {
                cap: cap as usize,
                v: Vec::new(),
            };
            for step in 0..20_000 {
                let r = next();
                // Keys over a range a little wider than the cache, with far outliers.
                let key = if r % 50 == 0 {
                    r >> 8
                } else {
                    r % (cap * 3 + 5)
                };
                if r % 23 == 0 {
                    assert_eq!(l.remove(key), p.remove(key), "cap {cap} step {step}");
                } else {
                    let w = (r >> 32) % 4 == 0;
                    assert_eq!(l.access(key, w), p.access(key, w), "cap {cap} step {step}");
                }
                assert_eq!(l.len(), p.v.len() as u64);
                assert_eq!(l.dirty(), p.v.iter().filter(|e| e.1).count() as u64);
            }
        }
    }
}
