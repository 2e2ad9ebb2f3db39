//! Which I/O comes next: the offsets a job issues (sequential, or random from a seeded PRNG),
//! the read/write mix, and when a job that is not time-based is done. Also the monotonic clock
//! every timestamp comes from.

use crate::job::{Job, Rw};
use crate::types::IoOp;

/// Nanoseconds on CLOCK_MONOTONIC (a vDSO call, no system call: about 20 ns).
#[inline]
pub fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators", 2016):
/// a few instructions per number, no allocation, and the same sequence for the same seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeds through splitmix64 so that neighbouring seeds (job 0, job 1, ...) give unrelated streams.
    pub fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        Rng(if z == 0 { 0x2545_f491_4f6c_dd1d } else { z })
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` without modulo bias worth mentioning (Lemire's multiply-shift).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Fills `buf` with pseudo-random bytes (write buffers: non-zero, not compressible).
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// A keyed bijection of `0..n`: walks every block of a region exactly once, in an order that
/// looks random, with no memory per block. fio gets the same property from its random map (a
/// bitmap of blocks already done); this is a cycle-walking permutation instead: a mix of
/// invertible steps on `k`-bit numbers (`2^k >= n`: multiply by an odd constant, add, xor with
/// a right shift; each is a bijection modulo `2^k`), applied again while the result is `>= n`.
/// As `2^k < 2n`, that is fewer than two rounds on average.
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    mask: u64,
    shift: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// The permutation of `0..n` for `key` (the pass number mixed with the seed).
    pub fn new(n: u64, key: u64) -> Permutation {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(1);
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut r = Rng::new(key);
        Permutation {
            n,
            mask,
            shift: (bits / 2).max(1),
            // Multipliers odd, so that they are invertible modulo 2^k.
            keys: [
                r.next_u64() | 1,
                r.next_u64(),
                r.next_u64() | 1,
                r.next_u64(),
            ],
        }
    }

    #[inline]
    fn round(&self, mut x: u64) -> u64 {
        let m = self.mask;
        x = x.wrapping_mul(self.keys[0]).wrapping_add(self.keys[1]) & m;
        x ^= x >> self.shift;
        x = x.wrapping_mul(self.keys[2]).wrapping_add(self.keys[3]) & m;
        x ^= x >> self.shift;
        x
    }

    /// The `i`-th element (`i < n`).
    #[inline]
    pub fn at(&self, i: u64) -> u64 {
        let mut x = self.round(i);
        while x >= self.n {
            x = self.round(x);
        }
        x
    }
}

/// The offsets and directions one job thread issues, over the region `[start, start + blocks*bs)`.
#[derive(Debug, Clone)]
pub struct IoPlan {
    start: u64,
    bs: u64,
    blocks: u64,
    rw: Rw,
    rwmixread: u32,
    rng: Rng,
    /// Sequential jobs: the next block to read and the next to write. fio keeps a position per
    /// direction (`last_pos[ddir]` in its io_u.c), so `readwrite` reads 0, 1, 2, ... and writes
    /// 0, 1, 2, ... (QA: one position for both made reads and writes take turns over the
    /// blocks, each block read or written, never both).
    next_block: [u64; 2],
    issued: u64,
    /// Random jobs without `norandommap`: the order of this pass over the blocks.
    perm: Option<Permutation>,
    /// Random jobs: the seed's key, the pass number and the position in the pass.
    key: u64,
    pass: u64,
    in_pass: u64,
    /// None when time-based: the plan loops over the region until the runtime ends.
    limit: Option<u64>,
}

impl IoPlan {
    /// The plan for job thread `jobnum` of `job` on a region of `len` bytes at `start`.
    /// Random jobs visit every block once per pass, as fio does with its random map: a
    /// size-based job reads or writes each block exactly once, a time-based one starts a new
    /// pass in a new order when a pass is done. With `norandommap` offsets are drawn with
    /// replacement instead (some blocks twice, some never). Both come from `randseed` mixed
    /// with the job number, so two runs with the same seed issue the same offsets.
    pub fn new(job: &Job, jobnum: u32, start: u64, len: u64) -> IoPlan {
        let blocks = len / job.bs;
        let key = job.randseed ^ (jobnum as u64).wrapping_mul(0x9e37_79b9);
        IoPlan {
            start,
            bs: job.bs,
            blocks,
            rw: job.rw,
            rwmixread: job.rwmixread,
            rng: Rng::new(key),
            next_block: [0; 2],
            issued: 0,
            perm: (job.rw.random() && !job.norandommap && blocks > 0)
                .then(|| Permutation::new(blocks, key)),
            key,
            pass: 0,
            in_pass: 0,
            limit: if job.time_based { None } else { Some(blocks) },
        }
    }

    /// Blocks in the region.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// I/Os issued so far.
    pub fn issued(&self) -> u64 {
        self.issued
    }

    /// Total I/Os the plan will issue, None when time-based.
    pub fn limit(&self) -> Option<u64> {
        self.limit
    }

    /// The next I/O: direction and byte offset; None when a size-based job has covered its region.
    #[inline]
    pub fn next_io(&mut self) -> Option<(IoOp, u64)> {
        if let Some(l) = self.limit {
            if self.issued >= l {
                return None;
            }
        }
        if self.blocks == 0 {
            return None;
        }
        self.issued += 1;
        let op = match self.rw {
            Rw::Read | Rw::RandRead => IoOp::Read,
            Rw::Write | Rw::RandWrite => IoOp::Write,
            Rw::ReadWrite | Rw::RandRw => {
                if (self.rng.below(100) as u32) < self.rwmixread {
                    IoOp::Read
                } else {
                    IoOp::Write
                }
            }
        };
        let block = if self.perm.is_some() {
            if self.in_pass == self.blocks {
                // A new pass, in a new order (fio clears its random map).
                self.pass += 1;
                self.in_pass = 0;
                self.perm = Some(Permutation::new(
                    self.blocks,
                    self.key ^ self.pass.wrapping_mul(0xa076_1d64_78bd_642f),
                ));
            }
            let b = self.perm.as_ref().map_or(0, |p| p.at(self.in_pass));
            self.in_pass += 1;
            b
        } else if self.rw.random() {
            self.rng.below(self.blocks)
        } else {
            let next = &mut self.next_block[usize::from(op == IoOp::Write)];
            let b = *next;
            *next += 1;
            if *next >= self.blocks {
                *next = 0;
            }
            b
        };
        Some((op, self.start + block * self.bs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn job(rw: Rw) -> Job {
        Job {
            rw,
            bs: 4096,
            target: "/x".into(),
            ..Job::default()
        }
    }

    #[test]
    fn same_seed_same_offsets_other_seed_other_offsets() {
        let j = job(Rw::RandRead);
        let a: Vec<_> = {
            let mut p = IoPlan::new(&j, 0, 0, 1 << 30);
            (0..1000).map(|_| p.next_io().unwrap()).collect()
        };
        let mut p = IoPlan::new(&j, 0, 0, 1 << 30);
        let b: Vec<_> = (0..1000).map(|_| p.next_io().unwrap()).collect();
        assert_eq!(a, b);
        let k = Job {
            randseed: 42,
            ..j.clone()
        };
        let mut p = IoPlan::new(&k, 0, 0, 1 << 30);
        let c: Vec<_> = (0..1000).map(|_| p.next_io().unwrap()).collect();
        assert_ne!(a, c);
        // Job threads differ from each other.
        let mut p = IoPlan::new(&j, 1, 0, 1 << 30);
        let d: Vec<_> = (0..1000).map(|_| p.next_io().unwrap()).collect();
        assert_ne!(a, d);
    }

    #[test]
    fn random_offsets_cover_every_block_once_per_pass() {
        let j = job(Rw::RandWrite);
        let start = 1 << 20;
        let len = 64 << 20;
        let mut p = IoPlan::new(&j, 0, start, len);
        let mut seen = HashSet::new();
        let mut buckets = [0u32; 16];
        let mut first_half = [0u32; 16];
        for k in 0..16384 {
            let (op, off) = p.next_io().unwrap();
            assert_eq!(op, IoOp::Write);
            assert!(off >= start && off + 4096 <= start + len, "{off}");
            assert_eq!((off - start) % 4096, 0);
            assert!(seen.insert(off), "block {off} twice in one pass");
            buckets[((off - start) * 16 / len) as usize] += 1;
            if k < 8192 {
                first_half[((off - start) * 16 / len) as usize] += 1;
            }
        }
        assert_eq!(seen.len(), 16384);
        assert_eq!(buckets, [1024; 16]);
        // Spread out while it goes, not a sweep: each sixteenth about half done halfway.
        for b in first_half {
            assert!((400..625).contains(&b), "{first_half:?}");
        }
        assert_eq!(p.next_io(), None, "size-based: one pass of blocks");
    }

    #[test]
    fn time_based_random_starts_a_new_order_each_pass() {
        let j = Job {
            time_based: true,
            runtime: Some(std::time::Duration::from_secs(1)),
            ..job(Rw::RandRead)
        };
        let mut p = IoPlan::new(&j, 0, 0, 1000 * 4096);
        let a: Vec<u64> = (0..1000).map(|_| p.next_io().unwrap().1).collect();
        let b: Vec<u64> = (0..1000).map(|_| p.next_io().unwrap().1).collect();
        let sorted = |v: &[u64]| {
            let mut v = v.to_vec();
            v.sort_unstable();
            v
        };
        let all: Vec<u64> = (0..1000).map(|i| i * 4096).collect();
        assert_eq!(sorted(&a), all);
        assert_eq!(sorted(&b), all);
        assert_ne!(a, b);
    }

    #[test]
    fn permutations_are_bijections_for_any_size() {
        for n in [1u64, 2, 3, 7, 64, 65, 1000, 4097] {
            for key in [0u64, 1, 0xb189_9bed] {
                let p = Permutation::new(n, key);
                let mut v: Vec<u64> = (0..n).map(|i| p.at(i)).collect();
                v.sort_unstable();
                assert_eq!(v, (0..n).collect::<Vec<_>>(), "n={n} key={key}");
            }
        }
        // Not the identity, and keyed.
        let (p, q) = (Permutation::new(1000, 1), Permutation::new(1000, 2));
        assert!((0..1000).filter(|&i| p.at(i) == i).count() < 20);
        assert!((0..1000).filter(|&i| p.at(i) == q.at(i)).count() < 20);
    }

    #[test]
    fn norandommap_draws_with_replacement() {
        let j = Job {
            norandommap: true,
            ..job(Rw::RandWrite)
        };
        let mut p = IoPlan::new(&j, 0, 0, 64 << 20);
        let mut seen = HashSet::new();
        for _ in 0..16384 {
            seen.insert(p.next_io().unwrap().1);
        }
        // 16384 draws over 16384 blocks: about 1 - 1/e of them distinct.
        assert!(seen.len() > 9000 && seen.len() < 11500, "{}", seen.len());
    }

    #[test]
    fn sequential_covers_region_once_or_loops_when_time_based() {
        let j = job(Rw::Write);
        let mut p = IoPlan::new(&j, 0, 0, 10 * 4096 + 100);
        let offs: Vec<u64> = std::iter::from_fn(|| p.next_io().map(|x| x.1)).collect();
        assert_eq!(offs, (0..10).map(|i| i * 4096).collect::<Vec<_>>());
        let t = Job {
            time_based: true,
            runtime: Some(std::time::Duration::from_secs(1)),
            ..j
        };
        let mut p = IoPlan::new(&t, 0, 0, 3 * 4096);
        let offs: Vec<u64> = (0..7).map(|_| p.next_io().unwrap().1).collect();
        assert_eq!(offs, vec![0, 4096, 8192, 0, 4096, 8192, 0]);
        assert_eq!(p.limit(), None);
    }

    /// QA: a `readwrite` job had one position for reads and writes (read 0, write 1, read 2,
    /// ...); fio keeps one per direction (its write_iolog of `rw=readwrite`: read 0, read 4096,
    /// read 8192, write 0, read 12288, ...).
    #[test]
    fn readwrite_reads_and_writes_each_from_the_start_like_fio() {
        let j = job(Rw::ReadWrite);
        let mut p = IoPlan::new(&j, 0, 0, 64 * 4096);
        let ios: Vec<(IoOp, u64)> = std::iter::from_fn(|| p.next_io()).collect();
        assert_eq!(
            ios.len(),
            64,
            "one pass of the region's blocks in all, as fio's io_size"
        );
        for op in [IoOp::Read, IoOp::Write] {
            let offs: Vec<u64> = ios.iter().filter(|x| x.0 == op).map(|x| x.1).collect();
            let want: Vec<u64> = (0..offs.len() as u64).map(|i| i * 4096).collect();
            assert_eq!(offs, want, "{op:?}");
        }
    }

    #[test]
    fn etcd_block_count_is_fios() {
        // fio issues floor(size / bs) writes: 30m at 2300 bytes gave "issued rwts: total=0,13677"
        // (the OSTree-vs-etcd issue [recipe-mco-ostree-etcd]).
        let j = Job {
            bs: 2300,
            ..job(Rw::Write)
        };
        let p = IoPlan::new(&j, 0, 0, 30 << 20);
        assert_eq!(p.limit(), Some(13677));
    }

    #[test]
    fn mix_follows_rwmixread() {
        let j = Job {
            rwmixread: 70,
            ..job(Rw::RandRw)
        };
        let mut p = IoPlan::new(&j, 0, 0, 1 << 30);
        let reads = (0..10000)
            .filter(|_| p.next_io().unwrap().0 == IoOp::Read)
            .count();
        assert!((6700..7300).contains(&reads), "{reads}");
        let j = Job {
            rwmixread: 0,
            ..job(Rw::ReadWrite)
        };
        let mut p = IoPlan::new(&j, 0, 0, 1 << 30);
        assert!((0..100).all(|_| p.next_io().unwrap().0 == IoOp::Write));
    }

    #[test]
    fn clock_moves_forward() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a && a > 0);
    }
}
