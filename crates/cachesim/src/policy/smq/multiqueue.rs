//! smq's multiqueue: sets of 64 LRU lists sharing one arena of nodes, with swap-on-hit
//! promotion between levels (dm-cache-policy-smq.c).

use super::super::links::{Linked, Links, List};
use super::super::{arena_insert, NIL};
use crate::hash::{map_with_capacity, FxHashMap};

/// smq's number of levels (NR_CACHE_LEVELS / NR_HOTSPOT_LEVELS in dm-cache-policy-smq.c).
pub(super) const LEVELS: usize = 64;

#[derive(Clone, Copy)]
pub(super) struct Node {
    pub(super) key: u64,
    links: Links,
    pub(super) level: u8,
    pub(super) queue: u8,
}

impl Linked for Node {
    fn links(&mut self) -> &mut Links {
        &mut self.links
    }
}

/// Multiqueues sharing one arena: `queues` sets of [`LEVELS`] LRU lists (head = LRU).
pub(super) struct MultiQueue {
    pub(super) nodes: Vec<Node>,
    pub(super) free: Vec<u32>,
    pub(super) lists: Vec<List>,
    pub(super) map: FxHashMap<u64, u32>,
    pub(super) cap: u64,
}

impl MultiQueue {
    pub(super) fn new(queues: usize, cap: u64) -> MultiQueue {
        MultiQueue {
            nodes: Vec::with_capacity(cap.min(1 << 20) as usize),
            free: Vec::new(),
            lists: vec![List::EMPTY; queues * LEVELS],
            map: map_with_capacity(cap.min(1 << 20) as usize),
            cap,
        }
    }
    pub(super) fn len(&self) -> u64 {
        self.map.len() as u64
    }
    pub(super) fn li(queue: u8, level: u8) -> usize {
        queue as usize * LEVELS + level as usize
    }
    pub(super) fn unlink(&mut self, i: u32) {
        let n = self.nodes[i as usize];
        self.lists[Self::li(n.queue, n.level)].unlink(&mut self.nodes, i);
    }
    /// Appends at the most-recently-used end of (queue, level).
    pub(super) fn push(&mut self, i: u32, queue: u8, level: u8) {
        self.link(i, queue, level, false);
    }
    /// Links `i` into (queue, level): at the least-recently-used end (`front`) or the
    /// most-recently-used end.
    fn link(&mut self, i: u32, queue: u8, level: u8, front: bool) {
        {
            let n = &mut self.nodes[i as usize];
            n.queue = queue;
            n.level = level;
        }
        let list = &mut self.lists[Self::li(queue, level)];
        if front {
            list.push_front(&mut self.nodes, i);
        } else {
            list.push_back(&mut self.nodes, i);
        }
    }
    /// Inserts at the least-recently-used end: a new hotspot region is the first candidate to
    /// leave unless it is hit.
    pub(super) fn insert_cold(&mut self, key: u64, queue: u8, level: u8) -> u32 {
        let i = self.insert(key, queue, level);
        if self.lists[Self::li(queue, level)].head != i {
            self.unlink(i);
            self.link(i, queue, level, true);
        }
        i
    }

    pub(super) fn insert(&mut self, key: u64, queue: u8, level: u8) -> u32 {
        let node = Node {
            key,
            links: Links::NONE,
            level,
            queue,
        };
        let i = arena_insert(&mut self.nodes, &mut self.free, node);
        self.push(i, queue, level);
        self.map.insert(key, i);
        i
    }
    pub(super) fn remove(&mut self, i: u32) -> Node {
        self.unlink(i);
        let n = self.nodes[i as usize];
        self.map.remove(&n.key);
        self.free.push(i);
        n
    }
    /// A hit: move up one level, swapping with the LRU entry of the level above.
    pub(super) fn hit(&mut self, i: u32) {
        let n = self.nodes[i as usize];
        if n.level as usize + 1 >= LEVELS {
            self.unlink(i);
            self.push(i, n.queue, n.level);
            return;
        }
        let up = n.level + 1;
        let above = self.lists[Self::li(n.queue, up)].head;
        self.unlink(i);
        if above != NIL {
            self.unlink(above);
            self.push(above, n.queue, n.level);
        }
        self.push(i, n.queue, up);
    }
    /// The LRU entry of the lowest non-empty level of `queue`.
    pub(super) fn victim(&self, queue: u8) -> Option<u32> {
        (0..LEVELS as u8)
            .map(|l| self.lists[Self::li(queue, l)].head)
            .find(|&h| h != NIL)
    }
    /// Keeps every level of `queue` at most `ceil(len / LEVELS)` entries, moving the most
    /// recently used entries of an over-full level up and the least recently used of an
    /// over-full top level down ("with this scheme we can decide how many entries occupy each
    /// multiqueue level", smq commit message).
    pub(super) fn rebalance(&mut self, queue: u8) {
        let total: u64 = (0..LEVELS as u8)
            .map(|l| self.lists[Self::li(queue, l)].len)
            .sum();
        let target = total.div_ceil(LEVELS as u64).max(1);
        for l in 0..LEVELS as u8 - 1 {
            while self.lists[Self::li(queue, l)].len > target {
                let mru = self.lists[Self::li(queue, l)].tail;
                self.unlink(mru);
                self.push(mru, queue, l + 1);
            }
        }
        for l in (1..LEVELS as u8).rev() {
            while self.lists[Self::li(queue, l)].len > target {
                let lru = self.lists[Self::li(queue, l)].head;
                self.unlink(lru);
                self.push(lru, queue, l - 1);
            }
        }
    }

    pub(super) fn move_queue(&mut self, i: u32, queue: u8) {
        let level = self.nodes[i as usize].level;
        self.unlink(i);
        self.push(i, queue, level);
    }
}
