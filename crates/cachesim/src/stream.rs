//! One pass over a trace for many consumers. The trace is read once, in chunks ([`CHUNK`] or
//! [`SHARED_CHUNK`] records, see [`layout_for`]), and every chunk goes to each consumer (a
//! policy at a size, the miss-ratio curve) on a small pool of threads. At most a few chunks are
//! held whatever the trace's length, so a week-long trace costs only what the simulated caches
//! hold, and reading the next chunk overlaps the replay of this one.
//!
//! Each consumer sees every record in trace order, so its result is the one a replay of the
//! whole trace on one thread gives; which thread runs it does not matter.

use crate::trace::Record;
use crate::TraceError;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

/// Records per chunk when each thread has one consumer: 16 Ki records of 40 bytes, 640 KiB,
/// so the reader stays a few chunks ahead with little memory.
pub const CHUNK: usize = 16 * 1024;

/// Records per chunk when threads take turns between consumers: 1 Mi (40 MiB). Each switch
/// evicts the other consumers' tables from the CPU caches, so a consumer must replay a long
/// run before the next switch. Measured on the two-core machine (BENCHMARKS.md, session 6),
/// with 16 (policy, size) replays and a curve: 16 Ki chunks on four threads were slower than
/// the in-memory replay before streaming, 1 Mi chunks on two were level with it or faster.
pub const SHARED_CHUNK: usize = 1024 * 1024;

/// How a pass spreads its consumers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Threads for the consumers (at least one; the reader is the calling thread).
    pub threads: usize,
    /// Records per chunk.
    pub chunk: usize,
    /// Chunks queued for each thread before the reader waits: the reader runs at most this far
    /// ahead of the slowest consumer, so at most `depth + 2` chunks are held at a time.
    pub depth: usize,
}

/// The layout for `consumers`: a thread each while there are at most two per CPU (the reader
/// takes a share of one, and a consumer waiting on memory leaves its CPU to another), else one
/// thread per CPU taking turns over long chunks.
pub fn layout_for(consumers: usize) -> Layout {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if consumers <= 2 * cpus {
        Layout {
            threads: consumers.max(1),
            chunk: CHUNK,
            depth: 4,
        }
    } else {
        Layout {
            threads: cpus,
            chunk: SHARED_CHUNK,
            depth: 1,
        }
    }
}

/// Takes the trace chunk by chunk, in order.
pub trait Consumer: Send {
    fn take(&mut self, chunk: &[Record]);
}

/// What the pass read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pass {
    /// Records read (the trace's requests).
    pub records: u64,
    /// Reads and writes of at least a byte among them (the rest, syncs, discards and reads or
    /// writes of 0 bytes, move no data).
    pub data_records: u64,
    /// The latest request time, in nanoseconds since the trace's start.
    pub max_t_ns: u64,
}

/// Reads `records` once and hands every chunk to each consumer, the consumers spread over
/// `layout.threads` threads. The first error of
/// `records` ends the pass and is returned; the consumers have then seen only part of the
/// trace, so their state must be discarded.
pub fn run<I>(
    records: I,
    consumers: Vec<&mut dyn Consumer>,
    layout: Layout,
) -> Result<Pass, TraceError>
where
    I: Iterator<Item = Result<Record, TraceError>>,
{
    let mut pass = Pass::default();
    let mut records = records.map(|r| {
        let r = r?;
        pass.records += 1;
        pass.data_records += u64::from(r.op.is_data() && r.len > 0);
        pass.max_t_ns = pass.max_t_ns.max(r.t_ns);
        Ok(r)
    });
    let Layout {
        threads,
        chunk,
        depth,
    } = layout;
    let chunk = chunk.max(1);
    // Consumer i runs on thread i mod threads (none when there are no consumers: the pass
    // then only reads).
    let threads = threads.max(1).min(consumers.len());
    let mut groups: Vec<Vec<&mut dyn Consumer>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, c) in consumers.into_iter().enumerate() {
        groups[i % threads].push(c);
    }
    let read = std::thread::scope(|s| -> Result<(), TraceError> {
        let mut txs = Vec::with_capacity(threads);
        for group in groups {
            let (tx, rx) = sync_channel::<Arc<Vec<Record>>>(depth);
            txs.push(tx);
            s.spawn(move || consume(group, rx));
        }
        // Chunks no thread holds any more are refilled instead of allocated.
        let mut pool: Vec<Arc<Vec<Record>>> = Vec::new();
        loop {
            let mut shared = pool
                .iter()
                .position(|a| Arc::strong_count(a) == 1)
                .map(|i| pool.swap_remove(i))
                .unwrap_or_else(|| Arc::new(Vec::with_capacity(chunk)));
            let buf = Arc::get_mut(&mut shared).expect("a chunk no thread holds");
            let full = fill(&mut records, buf, chunk)?;
            if !buf.is_empty() {
                for tx in &txs {
                    // A closed channel means its thread panicked: the scope re-raises that.
                    if tx.send(Arc::clone(&shared)).is_err() {
                        return Ok(());
                    }
                }
            }
            pool.push(shared);
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

/// Clears `buf` and fills it with up to `chunk` records; true when it is full (more may
/// follow).
fn fill<I>(records: &mut I, buf: &mut Vec<Record>, chunk: usize) -> Result<bool, TraceError>
where
    I: Iterator<Item = Result<Record, TraceError>>,
{
    buf.clear();
    for r in records.by_ref() {
        buf.push(r?);
        if buf.len() == chunk {
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
        // Chunk boundaries: empty, one short chunk, exactly full chunks, full plus a tail; the
        // production chunk and small ones, so that many chunks cross the queues.
        for chunk in [CHUNK, 7, 64] {
            let c = chunk as u64;
            for n in [0, 1, c - 1, c, 3 * c + 5, 40 * c + 3] {
                let recs = records(n);
                let mut want = Fold::default();
                want.take(&recs);
                for threads in [1, 2, 3, 8] {
                    let mut fs: Vec<Fold> = (0..5).map(|_| Fold::default()).collect();
                    let pass = run(
                        recs.iter().map(|r| Ok(*r)),
                        fs.iter_mut().map(|f| f as &mut dyn Consumer).collect(),
                        Layout {
                            threads,
                            chunk,
                            depth: 2,
                        },
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
    }

    #[test]
    fn a_pass_without_consumers_only_reads() {
        let recs = records(3 * CHUNK as u64 + 1);
        let pass = run(recs.iter().map(|r| Ok(*r)), Vec::new(), layout_for(0)).unwrap();
        assert_eq!(pass.records, recs.len() as u64);
    }

    #[test]
    fn the_layout_gives_each_consumer_a_thread_while_there_are_few() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let one = layout_for(1);
        assert_eq!((one.threads, one.chunk), (1, CHUNK));
        assert_eq!(layout_for(2 * cpus).threads, 2 * cpus);
        let many = layout_for(2 * cpus + 1);
        assert_eq!((many.threads, many.chunk), (cpus, SHARED_CHUNK));
    }

    #[test]
    fn a_read_error_ends_the_pass_and_is_returned() {
        let recs = records(2 * CHUNK as u64 + 10);
        for threads in [1, 2] {
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
            let layout = Layout {
                threads,
                chunk: CHUNK,
                depth: 4,
            };
            let e = run(it, vec![&mut f as &mut dyn Consumer], layout).unwrap_err();
            assert!(e.to_string().contains("cut"), "{e}");
            // Only whole chunks before the error were handed on.
            assert_eq!(f.n, CHUNK as u64);
        }
    }
}
