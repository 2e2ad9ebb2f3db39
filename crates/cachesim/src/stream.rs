//! One pass over a trace for many consumers. The trace is read once, in chunks of [`CHUNK`]
//! records, and every chunk goes to each consumer (a policy at a size, the miss-ratio curve) on
//! a small pool of threads. Memory is a few chunks per thread whatever the trace's length, so a
//! week-long trace costs only what the simulated caches hold, and reading the next chunk
//! overlaps the replay of this one.
//!
//! Each consumer sees every record in trace order, so its result is the one a replay of the
//! whole trace on one thread gives; which thread runs it does not matter.

use crate::trace::Record;
use crate::TraceError;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

/// Records per chunk: 16 Ki records of 40 bytes, 640 KiB, about half of one core's L2 cache,
/// so a thread with several consumers replays a chunk from cache after the first.
pub const CHUNK: usize = 16 * 1024;

/// Chunks queued for each thread before the reader waits: the reader runs at most this far
/// ahead of the slowest consumer, which bounds memory to about (DEPTH + 2) chunks per thread.
const DEPTH: usize = 4;

/// Takes the trace chunk by chunk, in order.
pub trait Consumer: Send {
    fn take(&mut self, chunk: &[Record]);
}

/// What the pass read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pass {
    /// Records read (the trace's requests).
    pub records: u64,
    /// The latest request time, in nanoseconds since the trace's start.
    pub max_t_ns: u64,
}

/// The threads [`run`] uses for `consumers`: one per consumer, at most two per CPU (the
/// reader takes a share of one; a consumer waiting on memory leaves its CPU to another).
pub fn threads_for(consumers: usize) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    consumers.min(2 * cpus).max(1)
}

/// Reads `records` once and hands every chunk to each consumer, the consumers spread over
/// `threads` threads (0: all on this thread, no threads started). The first error of
/// `records` ends the pass and is returned; the consumers have then seen only part of the
/// trace, so their state must be discarded.
pub fn run<I>(
    records: I,
    consumers: Vec<&mut dyn Consumer>,
    threads: usize,
) -> Result<Pass, TraceError>
where
    I: Iterator<Item = Result<Record, TraceError>>,
{
    let mut pass = Pass::default();
    let mut records = records.map(|r| {
        let r = r?;
        pass.records += 1;
        pass.max_t_ns = pass.max_t_ns.max(r.t_ns);
        Ok(r)
    });
    if threads == 0 || consumers.is_empty() {
        let mut consumers = consumers;
        let mut buf = Vec::with_capacity(CHUNK);
        loop {
            let full = fill(&mut records, &mut buf)?;
            for c in consumers.iter_mut() {
                c.take(&buf);
            }
            if !full {
                break;
            }
        }
        drop(records);
        return Ok(pass);
    }
    // Consumer i runs on thread i mod threads.
    let threads = threads.min(consumers.len());
    let mut groups: Vec<Vec<&mut dyn Consumer>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, c) in consumers.into_iter().enumerate() {
        groups[i % threads].push(c);
    }
    let read = std::thread::scope(|s| -> Result<(), TraceError> {
        let mut txs = Vec::with_capacity(threads);
        for group in groups {
            let (tx, rx) = sync_channel::<Arc<Vec<Record>>>(DEPTH);
            txs.push(tx);
            s.spawn(move || consume(group, rx));
        }
        // Chunks no thread holds any more are refilled instead of allocated.
        let mut pool: Vec<Arc<Vec<Record>>> = Vec::new();
        loop {
            let mut chunk = pool
                .iter()
                .position(|a| Arc::strong_count(a) == 1)
                .map(|i| pool.swap_remove(i))
                .unwrap_or_else(|| Arc::new(Vec::with_capacity(CHUNK)));
            let buf = Arc::get_mut(&mut chunk).expect("a chunk no thread holds");
            let full = fill(&mut records, buf)?;
            if !buf.is_empty() {
                for tx in &txs {
                    // A closed channel means its thread panicked: the scope re-raises that.
                    if tx.send(Arc::clone(&chunk)).is_err() {
                        return Ok(());
                    }
                }
            }
            pool.push(chunk);
            if !full {
                return Ok(());
            }
        }
        // Leaving the scope drops the senders: each thread drains its queue and ends.
    });
    read?;
    drop(records);
    Ok(pass)
}

/// Clears `buf` and fills it with up to [`CHUNK`] records; true when it is full (more may
/// follow).
fn fill<I>(records: &mut I, buf: &mut Vec<Record>) -> Result<bool, TraceError>
where
    I: Iterator<Item = Result<Record, TraceError>>,
{
    buf.clear();
    for r in records.by_ref() {
        buf.push(r?);
        if buf.len() == CHUNK {
            return Ok(true);
        }
    }
    Ok(false)
}

fn consume(mut group: Vec<&mut dyn Consumer>, rx: Receiver<Arc<Vec<Record>>>) {
    for chunk in rx {
        for c in group.iter_mut() {
            c.take(&chunk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Op;

    /// Folds every record it sees into a hash of the sequence.
    #[derive(Default)]
    struct Fold {
        n: u64,
        h: u64,
    }

    impl Consumer for Fold {
        fn take(&mut self, chunk: &[Record]) {
            for r in chunk {
                self.n += 1;
                self.h = (self.h ^ r.offset ^ r.t_ns.rotate_left(17)).wrapping_mul(0x100_0000_01b3);
            }
        }
    }

    fn records(n: u64) -> Vec<Record> {
        (0..n)
            .map(|i| Record::new(i * 7, (i * 2654435761) % 1_000_003 * 4096, 4096, Op::Read))
            .collect()
    }

    #[test]
    fn every_consumer_sees_every_record_in_order_whatever_the_threads() {
        // Chunk boundaries: empty, one short chunk, exactly full chunks, full plus a tail.
        for n in [0, 1, CHUNK as u64 - 1, CHUNK as u64, 3 * CHUNK as u64 + 5] {
            let recs = records(n);
            let mut want = Fold::default();
            want.take(&recs);
            for threads in [0, 1, 2, 3, 8] {
                let mut fs: Vec<Fold> = (0..5).map(|_| Fold::default()).collect();
                let pass = run(
                    recs.iter().map(|r| Ok(*r)),
                    fs.iter_mut().map(|f| f as &mut dyn Consumer).collect(),
                    threads,
                )
                .unwrap();
                assert_eq!(pass.records, n);
                assert_eq!(pass.max_t_ns, n.saturating_sub(1) * 7);
                for f in &fs {
                    assert_eq!((f.n, f.h), (want.n, want.h), "n {n} threads {threads}");
                }
            }
        }
    }

    #[test]
    fn a_read_error_ends_the_pass_and_is_returned() {
        let recs = records(2 * CHUNK as u64 + 10);
        for threads in [0, 2] {
            let mut f = Fold::default();
            let it = recs.iter().enumerate().map(|(i, r)| {
                if i == CHUNK + 3 {
                    Err(TraceError::Invalid {
                        what: "trace",
                        why: "cut".into(),
                    })
                } else {
                    Ok(*r)
                }
            });
            let e = run(it, vec![&mut f as &mut dyn Consumer], threads).unwrap_err();
            assert!(e.to_string().contains("cut"), "{e}");
            // Only whole chunks before the error were handed on.
            assert_eq!(f.n, CHUNK as u64);
        }
    }
}
