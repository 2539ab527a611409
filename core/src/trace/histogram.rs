//! A fixed-memory log-linear histogram of durations (microseconds).
//!
//! Values below 16 get one bucket each; above, every power of two is split
//! into 16 equal sub-buckets, so a bucket is never wider than 1/16 of its
//! lower bound and a percentile read from it is within 6.25% of the exact
//! value (HdrHistogram's layout with one significant hex digit). The buckets
//! cover the whole `u64` range, so the bound holds for any duration a host
//! can report (issue 14: values used to be clamped at 2^43 µs, and spans of
//! 1e15 and 2e15 µs both reported 1e15). 976 counters, under 8 KiB, whatever
//! the number of samples.

/// Sub-buckets per power of two, as a bit count.
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
/// The largest exponent: the top bit of a `u64`.
const MAX_EXP: u32 = 63;
/// Number of buckets.
pub(crate) const BUCKETS: usize = (SUB + (MAX_EXP - SUB_BITS + 1) as u64 * SUB) as usize;

/// Counts, min, max and sum of recorded values.
#[derive(Debug, Clone)]
pub(crate) struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: Box::new([0; BUCKETS]), count: 0, sum: 0, min: u64::MAX, max: 0 }
    }
}

pub(crate) fn index(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= SUB_BITS
    let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
    (SUB + u64::from(e - SUB_BITS) * SUB + sub) as usize
}

/// The inclusive value range `[lo, hi]` of bucket `i`.
pub(crate) fn bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, i);
    }
    let e = SUB_BITS as u64 + (i - SUB) / SUB;
    let sub = (i - SUB) % SUB;
    let width = 1u64 << (e - SUB_BITS as u64);
    let lo = (SUB + sub) << (e - SUB_BITS as u64);
    // `lo + width` is 2^64 for the last bucket: add `width - 1` instead.
    (lo, lo + (width - 1))
}

impl Histogram {
    pub(crate) fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.count += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    pub(crate) fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    pub(crate) fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    pub(crate) fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The nearest-rank `q`-quantile (0 < q <= 1): the midpoint of the bucket
    /// holding the value of rank `ceil(q * count)`, clamped to [min, max].
    pub(crate) fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bounds(i);
                return Some((lo + (hi - lo) / 2).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }
}
