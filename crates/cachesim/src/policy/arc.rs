//! Adaptive Replacement Cache (Megiddo and Modha, FAST'03) over fixed-size blocks: resident
//! lists T1 (seen once) and T2 (seen again), ghost lists B1 and B2 of recently evicted keys,
//! and the adaptive target `p` for T1's size. Where the paper leaves room, the choices follow
//! libCacheSim's ARC (so both report the same hits for the same trace and capacity): `p` and
//! its step `max(|B2|/|B1|, 1)` are real numbers; a ghost hit leaves its ghost list first and
//! runs REPLACE only when the cache is full; REPLACE takes from T1 when T2 is empty.

use super::links::{Linked, Links, List};
use super::{arena_insert, hit, inserted, removed, Access, BlockPolicy, NIL};
use crate::hash::{map_with_capacity, FxHashMap};

const T1: usize = 0;
const T2: usize = 1;
const B1: usize = 2;
const B2: usize = 3;

#[derive(Clone, Copy)]
struct Node {
    key: u64,
    links: Links,
    list: u8,
    dirty: bool,
}

impl Linked for Node {
    fn links(&mut self) -> &mut Links {
        &mut self.links
    }
}

pub struct Arc {
    c: u64,
    p: f64,
    map: FxHashMap<u64, u32>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    lists: [List; 4],
    dirty: u64,
}

impl Arc {
    pub fn new(c: u64) -> Arc {
        let pre = (2 * c).min(1 << 21) as usize;
        Arc {
            c,
            p: 0.0,
            map: map_with_capacity(pre),
            nodes: Vec::with_capacity(pre),
            free: Vec::new(),
            lists: [List::EMPTY; 4],
            dirty: 0,
        }
    }

    /// The adaptive target for T1, for tests and reports.
    pub fn target_p(&self) -> f64 {
        self.p
    }

    fn unlink(&mut self, i: u32) {
        let l = self.nodes[i as usize].list as usize;
        self.lists[l].unlink(&mut self.nodes, i);
    }

    fn push_front(&mut self, i: u32, l: usize) {
        self.nodes[i as usize].list = l as u8;
        self.lists[l].push_front(&mut self.nodes, i);
    }

    fn alloc(&mut self, key: u64) -> u32 {
        let node = Node {
            key,
            links: Links::NONE,
            list: 0,
            dirty: false,
        };
        arena_insert(&mut self.nodes, &mut self.free, node)
    }

    /// Drops the LRU end of a ghost list from the directory.
    fn drop_ghost_tail(&mut self, l: usize) {
        let t = self.lists[l].tail;
        if t == NIL {
            return;
        }
        self.unlink(t);
        let key = self.nodes[t as usize].key;
        self.map.remove(&key);
        self.free.push(t);
    }

    /// Moves a resident victim to its ghost list; returns 1 when it was dirty.
    fn demote(&mut self, from: usize, to: usize) -> u32 {
        let t = self.lists[from].tail;
        if t == NIL {
            return 0;
        }
        self.unlink(t);
        self.push_front(t, to);
        let n = &mut self.nodes[t as usize];
        u32::from(removed(std::mem::take(&mut n.dirty), &mut self.dirty))
    }

    /// The paper's REPLACE(x, p).
    fn replace(&mut self, in_b2: bool) -> u32 {
        let t1 = self.lists[T1].len;
        let t1f = t1 as f64;
        if (t1 > 0 && (t1f > self.p || (t1f == self.p && in_b2))) || self.lists[T2].len == 0 {
            self.demote(T1, B1)
        } else {
            self.demote(T2, B2)
        }
    }

    /// Makes room for one new resident block on a miss outside the ghosts (case IV).
    fn evict(&mut self) -> u32 {
        let l1 = self.lists[T1].len + self.lists[B1].len;
        if l1 >= self.c {
            if self.lists[B1].len > 0 {
                self.drop_ghost_tail(B1);
                self.replace(false)
            } else {
                // T1 holds the whole cache: evict its LRU outright, no ghost.
                let t = self.lists[T1].tail;
                self.unlink(t);
                let n = self.nodes[t as usize];
                self.map.remove(&n.key);
                self.free.push(t);
                u32::from(removed(n.dirty, &mut self.dirty))
            }
        } else {
            let total: u64 = self.lists.iter().map(|l| l.len).sum();
            if total >= 2 * self.c && self.lists[B2].len > 0 {
                self.drop_ghost_tail(B2);
            }
            self.replace(false)
        }
    }

    fn resident(&self) -> u64 {
        self.lists[T1].len + self.lists[T2].len
    }
}

impl BlockPolicy for Arc {
    fn access(&mut self, key: u64, write: bool) -> Access {
        let mut evicted_dirty = 0;
        if let Some(&i) = self.map.get(&key) {
            let list = self.nodes[i as usize].list as usize;
            match list {
                T1 | T2 => {
                    self.unlink(i);
                    self.push_front(i, T2);
                    let n = &mut self.nodes[i as usize];
                    return hit(&mut n.dirty, &mut self.dirty, write);
                }
                B1 => {
                    let (b1, b2) = (self.lists[B1].len as f64, self.lists[B2].len as f64);
                    self.p = (self.p + (b2 / b1).max(1.0)).min(self.c as f64);
                }
                _ => {
                    let (b1, b2) = (self.lists[B1].len as f64, self.lists[B2].len as f64);
                    self.p = (self.p - (b1 / b2).max(1.0)).max(0.0);
                }
            }
            let in_b2 = list == B2;
            // A ghost hit: the block leaves its ghost list and comes back into T2, after
            // REPLACE makes room if the cache is full.
            self.unlink(i);
            if self.resident() >= self.c {
                evicted_dirty += self.replace(in_b2);
            }
            self.push_front(i, T2);
            self.nodes[i as usize].dirty = write;
            if write {
                self.dirty += 1;
            }
            return Access::miss(evicted_dirty);
        }
        while self.resident() >= self.c {
            evicted_dirty += self.evict();
        }
        let i = self.alloc(key);
        self.push_front(i, T1);
        inserted(&mut self.nodes[i as usize].dirty, &mut self.dirty, write);
        self.map.insert(key, i);
        Access::miss(evicted_dirty)
    }

    fn remove(&mut self, key: u64) -> bool {
        let Some(i) = self.map.remove(&key) else {
            return false;
        };
        self.unlink(i);
        self.free.push(i);
        let n = self.nodes[i as usize];
        removed((n.list as usize) < 2 && n.dirty, &mut self.dirty)
    }

    fn dirty(&self) -> u64 {
        self.dirty
    }
    fn len(&self) -> u64 {
        self.resident()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::pattern;
    use super::*;

    #[test]
    fn hand_computed_arc() {
        // c = 2, p = 0.
        // 1 M: T1=[1]
        // 2 M: T1=[2 1]
        // 1 H: T1=[2] T2=[1]
        // 3 M: full; |T1|+|B1| = 1 < 2, total 2 < 4; REPLACE: |T1|=1 > p=0 -> 2 to B1.
        //      T1=[3] T2=[1] B1=[2]
        // 2 M (ghost in B1): p = min(0 + max(0/1, 1), 2) = 1; 2 leaves B1; full -> REPLACE:
        //      |T1|=1 == p and not from B2 -> T2's LRU 1 to B2; 2 into T2: T1=[3] T2=[2] B2=[1]
        // 3 H: T2=[3 2]
        // 1 M (ghost in B2): p = max(1 - max(0/1, 1), 0) = 0; 1 leaves B2; full -> REPLACE:
        //      |T1|=0 -> T2's LRU 2 to B2; 1 into T2: T2=[1 3] B2=[2]
        // 3 H, 1 H -> 3 hits of 9
        let mut a = Arc::new(2);
        assert_eq!(pattern(&mut a, &[1, 2, 1, 3, 2, 3, 1, 3, 1]), "MMHMMHMHH");
        assert_eq!(a.target_p(), 0.0);
        // 4 M: full, |T1|+|B1| = 0 < 2, total 3 < 4; REPLACE: T1 empty -> T2's LRU 3 to B2
        // (B2=[3 2]); 4 into T1. 2 M (ghost in B2): p stays 0; 2 leaves B2 (B2=[3]); full ->
        // REPLACE: |T1|=1 > 0 -> 4 to B1; 2 into T2 (T2=[2 1]).
        // 4 M (ghost in B1): p = min(0 + max(|B2|/|B1| = 1/1, 1), 2) = 1.
        assert_eq!(pattern(&mut a, &[4, 2, 4]), "MMM");
        assert_eq!(a.target_p(), 1.0);
    }

    #[test]
    fn scan_resistance_beats_lru() {
        // A hot set of 2 blocks re-read between one-off scans survives in T2.
        let mut keys = Vec::new();
        for round in 0..50u64 {
            keys.extend([1, 2, 1, 2]);
            keys.extend((0..3).map(|i| 1000 + round * 3 + i));
        }
        let mut a = Arc::new(4);
        let mut l = super::super::lru::Lru::new(4);
        let ha = pattern(&mut a, &keys).matches('H').count();
        let hl = pattern(&mut l, &keys).matches('H').count();
        assert!(ha >= hl, "arc {ha} lru {hl}");
    }
}
