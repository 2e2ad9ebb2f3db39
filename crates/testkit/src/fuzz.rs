//! The fuzz harness shared by every crate's `tests/fuzz.rs` (bolero targets, #13): a global
//! allocator that caps the live heap, so that an input that would make a parser allocate without
//! bound aborts the run ("memory allocation of N bytes failed") instead of swapping the machine,
//! and a per-input time check.
//!
//! In a `tests/fuzz.rs`:
//! ```ignore
//! #[global_allocator]
//! static ALLOC: disktier_testkit::fuzz::CappedAlloc = disktier_testkit::fuzz::CappedAlloc::new(1 << 30);
//! ```
//! `cargo test` runs each target over its checked-in corpus (`tests/__fuzz__/<target>/corpus`)
//! and then random inputs for [`BRIEF`]; `bench/fuzz.sh TARGET MINUTES` runs one target long.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long each target fuzzes random inputs in an ordinary `cargo test` (the corpus always
/// runs whole). `BOLERO_RANDOM_TEST_TIME_MS` overrides it, which is how `bench/fuzz.sh` runs
/// long.
pub const BRIEF: Duration = Duration::from_secs(2);
/// The largest random input generated.
pub const MAX_INPUT: usize = 64 * 1024;
/// The time one input may take (debug build, shared machine): a parser that needs more is
/// quadratic or looping.
pub const PER_INPUT: Duration = Duration::from_secs(5);

/// The system allocator with a cap on the bytes live at once.
pub struct CappedAlloc {
    cap: usize,
    live: AtomicUsize,
}

impl CappedAlloc {
    pub const fn new(cap: usize) -> Self {
        CappedAlloc {
            cap,
            live: AtomicUsize::new(0),
        }
    }
    pub fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }
}

// SAFETY: every call is passed to `System` unchanged; only the byte count is tracked, and an
// allocation over the cap returns null, which the caller handles as an allocation failure.
unsafe impl GlobalAlloc for CappedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = self.live.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        if now > self.cap {
            self.live.fetch_sub(layout.size(), Ordering::Relaxed);
            return std::ptr::null_mut();
        }
        // SAFETY: as documented on the impl.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            self.live.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as documented on the impl.
        unsafe { System.dealloc(ptr, layout) };
        self.live.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old {
            let now = self.live.fetch_add(new_size - old, Ordering::Relaxed) + new_size - old;
            if now > self.cap {
                self.live.fetch_sub(new_size - old, Ordering::Relaxed);
                return std::ptr::null_mut();
            }
        } else {
            self.live.fetch_sub(old - new_size, Ordering::Relaxed);
        }
        // SAFETY: as documented on the impl.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            if new_size > old {
                self.live.fetch_sub(new_size - old, Ordering::Relaxed);
            } else {
                self.live.fetch_add(old - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

/// Runs `f` on one input and fails (panics, so that bolero reports the input) when it took
/// longer than [`PER_INPUT`].
pub fn timed<T>(input: &[u8], f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    let took = t.elapsed();
    assert!(
        took <= PER_INPUT,
        "one input of {} bytes took {took:?}, more than {PER_INPUT:?}",
        input.len()
    );
    out
}

/// The files of a target's corpus (`<crate>/tests/__fuzz__/<target>/corpus`), read once.
pub fn seeds(manifest_dir: &str, target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(manifest_dir)
        .join("tests/__fuzz__")
        .join(target)
        .join("corpus");
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read(e.ok()?.path()).ok())
        .collect();
    out.sort();
    out
}

/// Structure-aware variants for random inputs, which on their own rarely parse: `input` read as
/// edits of one corpus seed (its first byte picks the seed; then each 4 bytes overwrite, insert
/// or delete a byte, or insert a huge number, a NaN or a newline at a position). The targets run
/// the raw input and this variant.
pub fn mutate(seeds: &[Vec<u8>], input: &[u8]) -> Vec<u8> {
    let (Some(&pick), false) = (input.first(), seeds.is_empty()) else {
        return input.to_vec();
    };
    let mut s = seeds[pick as usize % seeds.len()].clone();
    const TOKENS: [&[u8]; 8] = [
        b"18446744073709551616",
        b"-1",
        b"nan",
        b"inf",
        b"4294967295",
        b"\n",
        b"\0",
        b"1e308",
    ];
    for c in input[1..].chunks_exact(4) {
        let pos = u16::from_le_bytes([c[1], c[2]]) as usize % (s.len() + 1);
        match c[0] % 5 {
            0 if pos < s.len() => s[pos] = c[3],
            1 => s.insert(pos, c[3]),
            2 if pos < s.len() => {
                s.remove(pos);
            }
            3 => {
                let t = TOKENS[c[3] as usize % TOKENS.len()];
                s.splice(pos..pos, t.iter().copied());
            }
            4 if pos < s.len() => s.truncate(pos),
            _ => {}
        }
    }
    s
}
