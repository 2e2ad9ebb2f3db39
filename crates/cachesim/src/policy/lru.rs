//! Least-recently-used over fixed-size blocks: a hash map from block to a node in a `Vec`
//! arena that holds an intrusive doubly-linked list, so a request costs one hash lookup and a
//! few index writes and allocates nothing once the arena is full.

use super::{hit, inserted, Access, BlockPolicy, NIL};
use crate::hash::{map_with_capacity, FxHashMap};

#[derive(Clone, Copy)]
struct Node {
    key: u64,
    prev: u32,
    next: u32,
    dirty: bool,
}

pub struct Lru {
    cap: u64,
    map: FxHashMap<u64, u32>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    /// Most recently used.
    head: u32,
    /// Least recently used: the next victim.
    tail: u32,
    dirty: u64,
}

impl Lru {
    pub fn new(cap: u64) -> Lru {
        // Reserve up to 1 Mi entries up front; larger caches grow as they fill.
        let pre = cap.min(1 << 20) as usize;
        Lru {
            cap,
            map: map_with_capacity(pre),
            nodes: Vec::with_capacity(pre),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            dirty: 0,
        }
    }

    #[inline]
    fn unlink(&mut self, i: u32) {
        let Node { prev, next, .. } = self.nodes[i as usize];
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    #[inline]
    fn push_front(&mut self, i: u32) {
        let old = self.head;
        {
            let n = &mut self.nodes[i as usize];
            n.prev = NIL;
            n.next = old;
        }
        if old != NIL {
            self.nodes[old as usize].prev = i;
        } else {
            self.tail = i;
        }
        self.head = i;
    }
}

impl BlockPolicy for Lru {
    #[inline]
    fn access(&mut self, key: u64, write: bool) -> Access {
        if let Some(&i) = self.map.get(&key) {
            if self.head != i {
                self.unlink(i);
                self.push_front(i);
            }
            let n = &mut self.nodes[i as usize];
            return hit(&mut n.dirty, &mut self.dirty, write);
        }
        let mut evicted_dirty = 0;
        let i = if self.map.len() as u64 >= self.cap {
            // Reuse the victim's node: no allocation in the steady state.
            let v = self.tail;
            self.unlink(v);
            let old = self.nodes[v as usize];
            self.map.remove(&old.key);
            if old.dirty {
                evicted_dirty = 1;
                self.dirty -= 1;
            }
            v
        } else if let Some(f) = self.free.pop() {
            f
        } else {
            self.nodes.push(Node {
                key,
                prev: NIL,
                next: NIL,
                dirty: false,
            });
            (self.nodes.len() - 1) as u32
        };
        self.nodes[i as usize].key = key;
        inserted(&mut self.nodes[i as usize].dirty, &mut self.dirty, write);
        self.push_front(i);
        self.map.insert(key, i);
        Access::miss(evicted_dirty)
    }

    fn remove(&mut self, key: u64) -> bool {
        let Some(i) = self.map.remove(&key) else {
            return false;
        };
        self.unlink(i);
        self.free.push(i);
        let d = self.nodes[i as usize].dirty;
        if d {
            self.dirty -= 1;
        }
        d
    }

    fn dirty(&self) -> u64 {
        self.dirty
    }
    fn len(&self) -> u64 {
        self.map.len() as u64
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
}
