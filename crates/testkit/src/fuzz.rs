//! Limits for fuzz targets (the `tests/fuzz.rs` of each crate, run by bolero as ordinary
//! tests over the checked-in corpus, and for minutes by `bench/fuzz.sh`): memory and time per
//! input are capped here, so a parser that allocates without bound or loops shows up as a
//! failure instead of exhausting the machine.
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: disktier_testkit::fuzz::CappedAlloc = disktier_testkit::fuzz::CappedAlloc::new(256 << 20);
//!
//! #[test]
//! fn fuzz_size() {
//!     bolero::check!().for_each(|b: &[u8]| disktier_testkit::fuzz::bounded(&ALLOC, || { ... }));
//! }
//! ```
//!
//! `cargo test` runs each target over its checked-in corpus (`tests/__fuzz__/<target>/corpus`)
//! and then random inputs for [`BRIEF`]; `bench/fuzz.sh TARGET MINUTES` runs one target long.
//! Two styles of target share this module: [`bounded`] (a time and heap-growth bound per
//! input) and [`timed`] with [`mutate`] (corpus-seeded edits, for parsers that random bytes
//! rarely get past).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Wall-clock time one input may take (debug builds, a busy 2-core machine): far above what
/// any parser here needs for 4 KiB of input, far below a hang.
pub const TIME_PER_INPUT: Duration = Duration::from_secs(2);

/// How long each target fuzzes random inputs in an ordinary `cargo test` (the corpus always
/// runs whole). `BOLERO_RANDOM_TEST_TIME_MS` overrides it, which is how `bench/fuzz.sh` runs
/// long.
pub const BRIEF: Duration = Duration::from_secs(2);
/// The largest random input generated.
pub const MAX_INPUT: usize = 64 * 1024;
/// The time one input may take (debug build, shared machine): a parser that needs more is
/// quadratic or looping.
pub const PER_INPUT: Duration = Duration::from_secs(5);

/// An allocator that refuses (returns null, which aborts the process with "memory allocation
/// failed") any allocation that would take the live heap above `limit` bytes, and records the
/// peak, so [`bounded`] can fail an input that used more than it should.
pub struct CappedAlloc {
    limit: usize,
    live: AtomicUsize,
    peak: AtomicUsize,
}

impl CappedAlloc {
    pub const fn new(limit: usize) -> CappedAlloc {
        CappedAlloc {
            limit,
            live: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// Bytes allocated and not yet freed.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    /// Starts a new peak measurement at the current live size.
    pub fn reset_peak(&self) {
        self.peak.store(self.live(), Ordering::Relaxed);
    }

    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    pub fn limit(&self) -> usize {
        self.limit
    }
}

// SAFETY: every call is forwarded to the system allocator with the same layout; the counters
// do not affect the memory handed out.
unsafe impl GlobalAlloc for CappedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let size = layout.size();
        let now = self.live.fetch_add(size, Ordering::Relaxed) + size;
        if now > self.limit {
            self.live.fetch_sub(size, Ordering::Relaxed);
            return std::ptr::null_mut();
        }
        self.peak.fetch_max(now, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.live.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from System.alloc with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old {
            let grow = new_size - old;
            let now = self.live.fetch_add(grow, Ordering::Relaxed) + grow;
            if now > self.limit {
                self.live.fetch_sub(grow, Ordering::Relaxed);
                return std::ptr::null_mut();
            }
            self.peak.fetch_max(now, Ordering::Relaxed);
        } else {
            self.live.fetch_sub(old - new_size, Ordering::Relaxed);
        }
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs one input's check, failing it when it takes longer than [`TIME_PER_INPUT`] or grows
/// the heap by more than `max_growth` bytes. (Tests of one binary may run in parallel; the
/// memory bound is on the process, so each fuzz binary should hold only fuzz targets.)
pub fn bounded_by(alloc: &CappedAlloc, max_growth: usize, f: impl FnOnce()) {
    let base = alloc.live();
    alloc.reset_peak();
    let start = Instant::now();
    f();
    let took = start.elapsed();
    assert!(
        took <= TIME_PER_INPUT,
        "one input took {took:?} (limit {TIME_PER_INPUT:?})"
    );
    let grew = alloc.peak().saturating_sub(base);
    assert!(
        grew <= max_growth,
        "one input grew the heap by {grew} bytes (limit {max_growth})"
    );
}

/// Fuzz targets of one test binary run one at a time (the memory measurement is per process):
/// each target holds this guard while it runs.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`bounded_by`] with 64 MiB per input.
pub fn bounded(alloc: &CappedAlloc, f: impl FnOnce()) {
    bounded_by(alloc, 64 << 20, f)
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

/// One corpus-seeded target: `body` runs on each input, as given and as [`mutate`]d from a
/// seed of `target`'s corpus, under [`timed`], for [`BRIEF`] of random inputs up to
/// [`MAX_INPUT`] bytes. A macro, not a function, so that `bolero::check!` (which the calling
/// crate depends on) and `env!("CARGO_MANIFEST_DIR")` expand in the test that uses it.
///
/// ```ignore
/// disktier_testkit::fuzz_target!("fuzz_dttrace", |input| { read_all(input); });
/// ```
#[macro_export]
macro_rules! fuzz_target {
    ($target:expr, |$input:ident| $body:block) => {{
        let seeds = $crate::fuzz::seeds(env!("CARGO_MANIFEST_DIR"), $target);
        bolero::check!()
            .with_test_time($crate::fuzz::BRIEF)
            .with_max_len($crate::fuzz::MAX_INPUT)
            .for_each(move |raw: &[u8]| {
                $crate::fuzz::raw_and_mutated(&seeds, raw, |$input: &[u8]| $body)
            });
    }};
}

/// What one input may take under [`guarded`] before the watchdog calls it a hang.
pub const WATCHDOG_LIMIT: Duration = Duration::from_secs(10);

/// Runs `f` under a watchdog that aborts the process when one input takes longer than
/// [`WATCHDOG_LIMIT`], so a hang is a finding rather than a stuck CI job.
pub fn guarded<R>(f: impl FnOnce() -> R) -> R {
    use std::sync::atomic::AtomicU64;
    static EPOCH: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);
    static STARTED_MS: AtomicU64 = AtomicU64::new(0);
    static WATCHDOG: std::sync::Once = std::sync::Once::new();
    let epoch = *EPOCH;
    WATCHDOG.call_once(|| {
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            let s = STARTED_MS.load(Ordering::SeqCst);
            if s != 0
                && (epoch.elapsed().as_millis() as u64).saturating_sub(s)
                    > WATCHDOG_LIMIT.as_millis() as u64
            {
                eprintln!("fuzz: one input ran longer than {WATCHDOG_LIMIT:?}: a hang");
                std::process::abort();
            }
        });
    });
    STARTED_MS.store(epoch.elapsed().as_millis() as u64 + 1, Ordering::SeqCst);
    let r = f();
    STARTED_MS.store(0, Ordering::SeqCst);
    r
}

/// Whether this is an ordinary `cargo test` (neither `BOLERO_RANDOM_TEST_TIME_MS` nor
/// `BOLERO_RANDOM_ITERATIONS` asks for a long run): random inputs then stop after [`BRIEF`].
pub fn brief() -> bool {
    std::env::var_os("BOLERO_RANDOM_TEST_TIME_MS").is_none()
        && std::env::var_os("BOLERO_RANDOM_ITERATIONS").is_none()
}

/// Runs `f` on a random input and on its corpus-seeded variant ([`mutate`]), each [`timed`].
pub fn raw_and_mutated(seeds: &[Vec<u8>], raw: &[u8], f: impl Fn(&[u8])) {
    for input in [raw.to_vec(), mutate(seeds, raw)] {
        timed(&input, || f(&input));
    }
}

/// `bolero::check!()` with inputs up to [`MAX_INPUT`] bytes and, in an ordinary `cargo test`
/// ([`brief`]), random inputs for [`BRIEF`]. Expands in the fuzz test itself, so bolero finds
/// that test's corpus.
#[macro_export]
macro_rules! bolero_check {
    () => {{
        let t = ::bolero::check!().with_max_len($crate::fuzz::MAX_INPUT);
        if $crate::fuzz::brief() {
            t.with_test_time($crate::fuzz::BRIEF)
        } else {
            t
        }
    }};
}
