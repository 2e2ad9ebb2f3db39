//! The traffic a replay sends each device, window by window of trace time: what
//! [`crate::device::predict`] queues against the devices' capacity.
//!
//! Memory follows the trace's requests, not its time span: only windows with traffic are kept
//! (a week-long trace of two requests holds two), and at most [`MAX_WINDOWS`] of them. A replay
//! that needs more doubles the window width (1 s, 2 s, 4 s, ...) and merges neighbours, so a
//! trace with up to [`MAX_WINDOWS`] busy seconds is seen second by second, as before, and a
//! longer busy one in coarser windows. A replay without predictions keeps no windows at all.

use serde::Serialize;

/// Traffic in one window of trace time (one second unless the series was coarsened).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Window {
    pub requests: u64,
    pub cache_ops: u64,
    pub cache_bytes: u64,
    pub backing_read_ops: u64,
    pub backing_read_bytes: u64,
    pub backing_write_ops: u64,
    pub backing_write_bytes: u64,
    /// Requests served entirely by the cache, with no I/O to the backing device (they get the
    /// cache's latency; the others the backing device's).
    pub hit_requests: u64,
    /// Of `requests`, the syncs and discards: a `--sample` replay sees every one of them, so
    /// they are not scaled up with the sampled reads and writes.
    pub no_data_requests: u64,
}

impl Window {
    /// Adds `o`'s traffic to this window's.
    fn absorb(&mut self, o: &Window) {
        self.requests += o.requests;
        self.cache_ops += o.cache_ops;
        self.cache_bytes += o.cache_bytes;
        self.backing_read_ops += o.backing_read_ops;
        self.backing_read_bytes += o.backing_read_bytes;
        self.backing_write_ops += o.backing_write_ops;
        self.backing_write_bytes += o.backing_write_bytes;
        self.hit_requests += o.hit_requests;
        self.no_data_requests += o.no_data_requests;
    }

    /// The fields that count bytes, and those that count requests or operations (the reads
    /// and writes among `requests`), for scaling a sampled replay's.
    pub(crate) fn fields_mut(&mut self) -> ([&mut u64; 3], [&mut u64; 5]) {
        (
            [
                &mut self.cache_bytes,
                &mut self.backing_read_bytes,
                &mut self.backing_write_bytes,
            ],
            [
                &mut self.requests,
                &mut self.cache_ops,
                &mut self.backing_read_ops,
                &mut self.backing_write_ops,
                &mut self.hit_requests,
            ],
        )
    }
}

/// The most windows one replay keeps: 2^20 (72 bytes each, 72 MiB), 12 days of seconds that
/// all carry traffic, so that every trace the dense per-second series before this bound saw
/// second by second (up to 864,000 seconds, 10 days, whatever the traffic) still is (2^19
/// coarsened a week-long trace such as MSR Cambridge's into 2 s windows: found by QA). A
/// coarsened series is said in the prediction ([`crate::device::Prediction::window_s`]).
pub const MAX_WINDOWS: usize = 1 << 20;

/// The windows of one replay: those with traffic, in time order.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// Whether windows are kept (only predictions read them).
    on: bool,
    /// log2 of the window width in seconds.
    shift: u32,
    /// (window index = second >> shift, traffic), ascending by index.
    entries: Vec<(u64, Window)>,
    /// Where the traffic goes while the series is off (never read).
    scratch: Window,
    /// The most windows kept before coarsening ([`MAX_WINDOWS`]; smaller in tests).
    max: usize,
}

impl Series {
    /// A series that keeps windows when `on` (else every window is a scratch one).
    pub fn new(on: bool) -> Series {
        Series::with_max(on, MAX_WINDOWS)
    }

    /// [`Series::new`] keeping at most `max` (at least 2) windows before coarsening (tests).
    pub fn with_max(on: bool, max: usize) -> Series {
        Series {
            on,
            max: max.max(2),
            ..Series::default()
        }
    }

    /// Whether windows are kept.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// The width of a window in seconds (a power of two).
    pub fn width_s(&self) -> u64 {
        1 << self.shift
    }

    /// The window holding time `t_ns`. One comparison while requests stay in the newest
    /// window; no allocation but the vector's amortised growth when a new one starts.
    #[inline]
    pub fn at(&mut self, t_ns: u64) -> &mut Window {
        if !self.on {
            return &mut self.scratch;
        }
        let s = t_ns / 1_000_000_000;
        let n = self.entries.len();
        if n > 0 && self.entries[n - 1].0 == s >> self.shift {
            return &mut self.entries[n - 1].1;
        }
        self.open(s)
    }

    /// Finds or makes the window of second `s`, coarsening first when the series is full.
    #[cold]
    fn open(&mut self, s: u64) -> &mut Window {
        loop {
            let i = s >> self.shift;
            // New windows nearly always come last; records that step back search.
            let at = match self.entries.last() {
                Some(&(last, _)) if last < i => Err(self.entries.len()),
                _ => self.entries.binary_search_by_key(&i, |e| e.0),
            };
            match at {
                Ok(k) => return &mut self.entries[k].1,
                Err(k) if self.entries.len() < self.max => {
                    self.entries.insert(k, (i, Window::default()));
                    return &mut self.entries[k].1;
                }
                Err(_) => self.coarsen(),
            }
        }
    }

    /// Doubles the window width, merging each pair of neighbours.
    fn coarsen(&mut self) {
        self.shift += 1;
        let mut out = 0;
        for k in 0..self.entries.len() {
            let (i, w) = self.entries[k];
            let i = i >> 1;
            if out > 0 && self.entries[out - 1].0 == i {
                self.entries[out - 1].1.absorb(&w);
            } else {
                self.entries[out] = (i, w);
                out += 1;
            }
        }
        self.entries.truncate(out);
    }

    /// The windows with traffic: (index, window), ascending; window `i` covers seconds
    /// `i * width_s()` to `(i + 1) * width_s()`.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &Window)> {
        self.entries.iter().map(|(i, w)| (*i, w))
    }

    /// The windows, for scaling.
    pub(crate) fn windows_mut(&mut self) -> impl Iterator<Item = &mut Window> {
        self.entries.iter_mut().map(|(_, w)| w)
    }

    /// How many windows are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn only_windows_with_traffic_are_kept_whatever_the_span() {
        let mut s = Series::new(true);
        s.at(0).requests += 1;
        // A month later.
        s.at(30 * 86_400 * S).requests += 1;
        s.at(30 * 86_400 * S + 5).requests += 1;
        assert_eq!(s.len(), 2);
        assert_eq!(s.width_s(), 1);
        let got: Vec<(u64, u64)> = s.iter().map(|(i, w)| (i, w.requests)).collect();
        assert_eq!(got, vec![(0, 1), (30 * 86_400, 2)]);
    }

    #[test]
    fn a_record_that_steps_back_lands_in_its_own_window() {
        let mut s = Series::new(true);
        for t in [0, 5, 3, 5, 4, 0] {
            s.at(t * S).requests += 1;
        }
        let got: Vec<(u64, u64)> = s.iter().map(|(i, w)| (i, w.requests)).collect();
        assert_eq!(got, vec![(0, 2), (3, 1), (4, 1), (5, 2)]);
    }

    #[test]
    fn a_full_series_doubles_its_window_and_keeps_every_request() {
        let mut s = Series::with_max(true, 4);
        for t in 0..10 {
            s.at(t * S).requests += t + 1;
        }
        // 10 busy seconds into at most 4 windows: 4-second windows.
        assert_eq!(s.width_s(), 4);
        let got: Vec<(u64, u64)> = s.iter().map(|(i, w)| (i, w.requests)).collect();
        assert_eq!(
            got,
            vec![(0, 1 + 2 + 3 + 4), (1, 5 + 6 + 7 + 8), (2, 9 + 10)]
        );
        assert!(s.len() <= 4);
    }

    #[test]
    fn an_off_series_keeps_nothing() {
        let mut s = Series::new(false);
        for t in 0..1000 {
            s.at(t * S).requests += 1;
        }
        assert!(s.is_empty());
    }
}
