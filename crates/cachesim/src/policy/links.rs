//! Doubly linked lists threaded through an arena of nodes by index (`NIL` at either end): the
//! lists of LRU, ARC and smq's multiqueues.

use super::NIL;

/// A node's neighbours in its list (`NIL` at an end).
#[derive(Clone, Copy)]
pub(crate) struct Links {
    pub(crate) prev: u32,
    pub(crate) next: u32,
}

impl Links {
    /// The links of a node in no list.
    pub(crate) const NONE: Links = Links {
        prev: NIL,
        next: NIL,
    };
}

/// A node of an arena-linked list.
pub(crate) trait Linked {
    fn links(&mut self) -> &mut Links;
}

/// A list's first and last node (`NIL` when it is empty) and its length.
#[derive(Clone, Copy)]
pub(crate) struct List {
    pub(crate) head: u32,
    pub(crate) tail: u32,
    pub(crate) len: u64,
}

impl List {
    pub(crate) const EMPTY: List = List {
        head: NIL,
        tail: NIL,
        len: 0,
    };

    /// Takes node `i` out of this list.
    #[inline]
    pub(crate) fn unlink<N: Linked>(&mut self, nodes: &mut [N], i: u32) {
        let Links { prev, next } = *nodes[i as usize].links();
        if prev != NIL {
            nodes[prev as usize].links().next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            nodes[next as usize].links().prev = prev;
        } else {
            self.tail = prev;
        }
        self.len -= 1;
    }

    /// Puts node `i` first in this list.
    #[inline]
    pub(crate) fn push_front<N: Linked>(&mut self, nodes: &mut [N], i: u32) {
        self.link(nodes, i, NIL, self.head);
    }

    /// Puts node `i` last in this list.
    #[inline]
    pub(crate) fn push_back<N: Linked>(&mut self, nodes: &mut [N], i: u32) {
        self.link(nodes, i, self.tail, NIL);
    }

    /// Puts node `i` into this list between `prev` and `next` (neighbours, or `NIL` at an end).
    #[inline]
    fn link<N: Linked>(&mut self, nodes: &mut [N], i: u32, prev: u32, next: u32) {
        *nodes[i as usize].links() = Links { prev, next };
        if prev != NIL {
            nodes[prev as usize].links().next = i;
        } else {
            self.head = i;
        }
        if next != NIL {
            nodes[next as usize].links().prev = i;
        } else {
            self.tail = i;
        }
        self.len += 1;
    }
}
