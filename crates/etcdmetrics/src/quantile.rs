//! Cumulative Prometheus histograms and `histogram_quantile` computed exactly as Prometheus
//! computes it (promql/quantile.go, `bucketQuantile`, classic buckets): buckets sorted by upper
//! bound, equal bounds merged, counts forced monotonic, the rank `q * total` located in the first
//! bucket whose cumulative count reaches it, and the value interpolated linearly inside that
//! bucket (from 0 for the first bucket). A rank in the `+Inf` bucket answers the highest finite
//! bound; no `+Inf` bucket, fewer than two buckets or no observations answer nothing (NaN there).

use serde::Serialize;

/// One cumulative histogram: `(upper bound, cumulative count)` pairs, plus `_count` and `_sum`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Histogram {
    /// Sorted by bound; the last is `+Inf` when the histogram is well-formed.
    pub buckets: Vec<(f64, f64)>,
    pub count: f64,
    pub sum: f64,
}

/// A quantile and the bucket it was interpolated in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quantile {
    /// The value (the histogram's unit: seconds for etcd).
    pub value: f64,
    /// Lower and upper bound of the bucket the rank fell in. When the rank fell in the `+Inf`
    /// bucket, `upper` is infinite and `value` is the highest finite bound: the true quantile is
    /// at least that.
    pub lower: f64,
    pub upper: f64,
    /// Observations in the histogram.
    pub observations: f64,
}

impl Quantile {
    /// True when the rank fell in the `+Inf` bucket (the value is a lower bound).
    pub fn open_ended(&self) -> bool {
        self.upper.is_infinite()
    }
}

impl Histogram {
    /// Adds one bucket sample (bound from the `le` label).
    pub fn push_bucket(&mut self, le: f64, cumulative: f64) {
        self.buckets.push((le, cumulative));
    }

    /// Sorts, merges equal bounds (summing, as Prometheus' `coalesceBuckets`) and makes counts
    /// monotonic (as its `ensureMonotonic`: a dip takes the previous count).
    pub fn normalise(&mut self) {
        self.buckets.retain(|(le, c)| !le.is_nan() && !c.is_nan());
        self.buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut merged: Vec<(f64, f64)> = Vec::with_capacity(self.buckets.len());
        for &(le, c) in &self.buckets {
            match merged.last_mut() {
                Some(last) if last.0 == le => last.1 += c,
                _ => merged.push((le, c)),
            }
        }
        let mut max = f64::NEG_INFINITY;
        for b in &mut merged {
            if b.1 < max {
                b.1 = max;
            } else {
                max = b.1;
            }
        }
        self.buckets = merged;
    }

    /// The difference `self - earlier`, bucket by bucket: what was observed between two scrapes.
    /// `None` when the buckets differ or a count went down (the member restarted in between).
    pub fn since(&self, earlier: &Histogram) -> Option<Histogram> {
        if self.buckets.len() != earlier.buckets.len() {
            return None;
        }
        let mut buckets = Vec::with_capacity(self.buckets.len());
        for (&(le, c), &(le0, c0)) in self.buckets.iter().zip(&earlier.buckets) {
            if le != le0 || c < c0 {
                return None;
            }
            buckets.push((le, c - c0));
        }
        if self.count < earlier.count {
            return None;
        }
        Some(Histogram {
            buckets,
            count: self.count - earlier.count,
            sum: self.sum - earlier.sum,
        })
    }

    /// Observations, from the `+Inf` bucket (or `_count` without one).
    pub fn observations(&self) -> f64 {
        match self.buckets.last() {
            Some(&(le, c)) if le == f64::INFINITY => c,
            _ => self.count,
        }
    }

    /// Observations above the smallest bucket bound at or above `bound`, with that bound: exact
    /// when `bound` is a bucket bound, otherwise a lower bound on the count above `bound` (etcd's
    /// fsync buckets double from 1 ms, so 100 ms is counted as "over 128 ms"). `None` when no
    /// finite bound is at or above `bound`.
    pub fn count_above(&self, bound: f64) -> Option<(f64, f64)> {
        let total = self.observations();
        self.buckets
            .iter()
            .find(|(le, _)| *le >= bound && le.is_finite())
            .map(|&(le, c)| (le, (total - c).max(0.0)))
    }

    /// `histogram_quantile(q, ...)` as Prometheus computes it; `None` where Prometheus says NaN
    /// (or ±Inf for q outside 0..1).
    pub fn quantile(&self, q: f64) -> Option<Quantile> {
        let mut h = self.clone();
        h.normalise();
        histogram_quantile(q, &h.buckets)
    }
}

/// Prometheus' `bucketQuantile` over normalised `(bound, cumulative count)` buckets.
pub fn histogram_quantile(q: f64, buckets: &[(f64, f64)]) -> Option<Quantile> {
    if q.is_nan() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let n = buckets.len();
    if n < 2 || buckets[n - 1].0 != f64::INFINITY {
        return None;
    }
    let observations = buckets[n - 1].1;
    if observations <= 0.0 {
        return None;
    }
    let mut rank = q * observations;
    // sort.Search over all but the +Inf bucket: the first whose count reaches the rank.
    let b = buckets[..n - 1]
        .iter()
        .position(|&(_, c)| c >= rank)
        .unwrap_or(n - 1);
    if b == n - 1 {
        return Some(Quantile {
            value: buckets[n - 2].0,
            lower: buckets[n - 2].0,
            upper: f64::INFINITY,
            observations,
        });
    }
    if b == 0 && buckets[0].0 <= 0.0 {
        return Some(Quantile {
            value: buckets[0].0,
            lower: buckets[0].0,
            upper: buckets[0].0,
            observations,
        });
    }
    let end = buckets[b].0;
    let mut count = buckets[b].1;
    let mut start = 0.0;
    if b > 0 {
        start = buckets[b - 1].0;
        count -= buckets[b - 1].1;
        rank -= buckets[b - 1].1;
    }
    Some(Quantile {
        value: start + (end - start) * (rank / count),
        lower: start,
        upper: end,
        observations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(b: &[(f64, f64)]) -> Histogram {
        Histogram {
            buckets: b.to_vec(),
            count: b.last().map(|x| x.1).unwrap_or(0.0),
            sum: 0.0,
        }
    }

    const INF: f64 = f64::INFINITY;

    #[test]
    fn interpolates_inside_the_bucket() {
        // 100 observations: 50 <= 1 ms, 90 <= 2 ms, 100 <= 4 ms. p99: rank 99 falls in
        // (2 ms, 4 ms] holding 10, 9 of them below the rank: 2 + 2 * 9/10 = 3.8 ms.
        let x = h(&[(0.001, 50.0), (0.002, 90.0), (0.004, 100.0), (INF, 100.0)]);
        let q = x.quantile(0.99).unwrap();
        assert!((q.value - 0.0038).abs() < 1e-12, "{q:?}");
        assert_eq!((q.lower, q.upper), (0.002, 0.004));
        // p50: rank 50 is reached exactly by the first bucket: 0 + 1 ms * 50/50.
        let q = x.quantile(0.5).unwrap();
        assert!((q.value - 0.001).abs() < 1e-15);
        assert_eq!((q.lower, q.upper), (0.0, 0.001));
        // p25: first bucket, from 0: 1 ms * 25/50 = 0.5 ms.
        assert!((x.quantile(0.25).unwrap().value - 0.0005).abs() < 1e-15);
    }

    #[test]
    fn rank_in_the_inf_bucket_answers_the_highest_finite_bound() {
        // 10 of 100 observations above 8 ms: p99 (rank 99) is in +Inf.
        let x = h(&[(0.004, 80.0), (0.008, 90.0), (INF, 100.0)]);
        let q = x.quantile(0.99).unwrap();
        assert_eq!(q.value, 0.008);
        assert!(q.open_ended());
        // p90 is exactly reached by the 8 ms bucket: 4 + 4 * 10/10.
        assert!((x.quantile(0.9).unwrap().value - 0.008).abs() < 1e-15);
    }

    #[test]
    fn empty_and_malformed_histograms_have_no_quantile() {
        assert_eq!(h(&[]).quantile(0.99), None);
        assert_eq!(h(&[(0.001, 0.0), (INF, 0.0)]).quantile(0.99), None);
        // No +Inf bucket: Prometheus answers NaN.
        assert_eq!(h(&[(0.001, 5.0), (0.002, 10.0)]).quantile(0.5), None);
        // Only the +Inf bucket.
        assert_eq!(h(&[(INF, 10.0)]).quantile(0.5), None);
        assert_eq!(h(&[(0.001, 1.0), (INF, 1.0)]).quantile(1.5), None);
        assert_eq!(h(&[(0.001, 1.0), (INF, 1.0)]).quantile(f64::NAN), None);
    }

    #[test]
    fn unsorted_duplicate_and_non_monotonic_buckets_are_normalised() {
        // Same histogram as above, given out of order, with the 2 ms bucket split in two
        // series (coalesced by summing) and a dip (forced monotonic).
        let mut x = h(&[
            (INF, 100.0),
            (0.002, 40.0),
            (0.001, 50.0),
            (0.002, 50.0),
            (0.004, 100.0),
        ]);
        x.buckets.push((0.003, 80.0)); // dips below 90: becomes 90
        let q = x.quantile(0.99).unwrap();
        // Buckets: 1ms:50 2ms:90 3ms:90 4ms:100 Inf:100. Rank 99 in (3, 4]: 3 + 1 * 9/10.
        assert!((q.value - 0.0039).abs() < 1e-12, "{q:?}");
    }

    #[test]
    fn a_non_positive_first_bound_is_returned_as_is() {
        let x = h(&[(0.0, 10.0), (1.0, 20.0), (INF, 20.0)]);
        assert_eq!(x.quantile(0.1).unwrap().value, 0.0);
    }

    #[test]
    fn differences_between_scrapes() {
        let a = h(&[(0.001, 10.0), (0.002, 12.0), (INF, 12.0)]);
        let b = h(&[(0.001, 15.0), (0.002, 20.0), (INF, 22.0)]);
        let d = b.since(&a).unwrap();
        assert_eq!(d.buckets, vec![(0.001, 5.0), (0.002, 8.0), (INF, 10.0)]);
        assert_eq!(d.observations(), 10.0);
        assert_eq!(d.count_above(0.002), Some((0.002, 2.0)));
        assert_eq!(d.count_above(0.0015), Some((0.002, 2.0)));
        assert_eq!(d.count_above(0.0001), Some((0.001, 5.0)));
        assert_eq!(d.count_above(0.01), None);
        // A restart (counts went down) is not a difference.
        assert_eq!(a.since(&b), None);
    }
}
