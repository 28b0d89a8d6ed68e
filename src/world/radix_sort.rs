//! Sorting a step's keys (body pairs, frame pairs): a least-significant-
//! digit radix sort over the bits that vary.
//!
//! Each step sorts one `u64` key per contact (two body slots packed) to
//! find its body pairs, and the pair set sorts its frame pairs. A
//! comparison sort spends `log₂ n` comparisons and branch misses a key on
//! these random keys; the radix sort moves each key once per digit, with
//! no comparison at all. Digits cover only the span of bits that differ
//! among the keys (a first pass finds it), up to [`MAX_DIGIT_BITS`] wide:
//! 34 varying bits take 3 passes of 12-bit digits where bytes took 5 or 6.
//! One pass counts every digit's histogram at once; digits equal in every
//! key (the gap between two packed indices) are skipped. With several
//! threads, large key sets are sorted in parallel instead.

/// Widest digit: 4,096 buckets, their counts (16 KB a digit) in L1/L2.
const MAX_DIGIT_BITS: u32 = 12;

/// Below this many keys a comparison sort is as fast, with no histograms
/// to clear.
const SMALL: usize = 256;

/// From this many keys on, with more than one thread, a parallel
/// comparison sort: slower on one thread than the radix sort's passes, but
/// split among the threads where they run on one.
#[cfg(feature = "parallel")]
const PARALLEL: usize = 1 << 15;

/// Sorts `keys` in place (ascending), using `scratch` as the other buffer
/// of each pass: allocation-free when `scratch` has room for `keys.len()`
/// (the caller reserves it with the keys).
pub(super) fn sort_keys(keys: &mut Vec<u64>, scratch: &mut Vec<u64>) {
    let n = keys.len();
    if n < SMALL {
        keys.sort_unstable();
        return;
    }
    #[cfg(feature = "parallel")]
    if n >= PARALLEL && rayon::current_num_threads() > 1 {
        // The radix sort's passes are serial; the same keys come out
        // (integers: an unstable sort has one answer), sorted on every thread.
        use rayon::slice::ParallelSliceMut;
        keys.par_sort_unstable();
        return;
    }
    let digits = Digits::of(keys);
    let buckets = 1usize << digits.bits;
    // One digit's counts and the next one's, counted while this one is
    // scattered (a key's digits do not depend on the order): 32 KB.
    let (mut count, mut next) = ([0u32; 1 << MAX_DIGIT_BITS], [0u32; 1 << MAX_DIGIT_BITS]);
    let first = digits.extract(0);
    keys.iter().for_each(|&k| count[first.of(k)] += 1);
    scratch.clear();
    scratch.resize(n, 0);
    for d in 0..digits.count {
        let (this, after) = (digits.extract(d), digits.extract(d + 1));
        next[..buckets].fill(0);
        // A digit every key shares does not reorder them.
        if count[..buckets].iter().any(|&c| c as usize == n) {
            keys.iter().for_each(|&k| next[after.of(k)] += 1);
        } else {
            // Counts become each bucket's next position.
            let mut sum = 0u32;
            for c in &mut count[..buckets] {
                (*c, sum) = (sum, sum + *c);
            }
            for &k in keys.iter() {
                let b = &mut count[this.of(k)];
                scratch[*b as usize] = k;
                *b += 1;
                next[after.of(k)] += 1;
            }
            std::mem::swap(keys, scratch);
        }
        std::mem::swap(&mut count, &mut next);
    }
}

/// How to read one digit of a key: a shift and a mask, worked out once a
/// pass rather than once a key.
#[derive(Clone, Copy, Debug)]
struct Extract {
    shift: u32,
    mask: u64,
}

impl Extract {
    /// The digit of `k`.
    #[inline(always)]
    fn of(self, k: u64) -> usize {
        ((k >> self.shift) & self.mask) as usize
    }
}

/// The digits of a key set: `count` digits of `bits` bits from bit `low`
/// (the lowest bit that varies) to past the highest that varies.
#[derive(Clone, Copy, Debug)]
struct Digits {
    low: u32,
    bits: u32,
    count: usize,
}

impl Digits {
    /// The digits covering the bits that vary among `keys` (not empty).
    fn of(keys: &[u64]) -> Self {
        let (or, and) = keys.iter().fold((0, u64::MAX), |(o, a), &k| (o | k, a & k));
        let varying = or ^ and;
        if varying == 0 {
            return Digits { low: 0, bits: 1, count: 0 };
        }
        let low = varying.trailing_zeros();
        let span = 64 - varying.leading_zeros() - low;
        let count = span.div_ceil(MAX_DIGIT_BITS);
        Digits { low, bits: span.div_ceil(count), count: count as usize }
    }

    /// How to read digit `d` (`d` may be one past the last: any digit
    /// then; one past bit 63 is zero).
    fn extract(&self, d: usize) -> Extract {
        let shift = self.low + d as u32 * self.bits;
        if shift >= u64::BITS {
            return Extract { shift: 0, mask: 0 };
        }
        Extract { shift, mask: (1 << self.bits) - 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(keys: Vec<u64>) {
        let mut expect = keys.clone();
        expect.sort_unstable();
        let (mut got, mut scratch) = (keys, Vec::new());
        sort_keys(&mut got, &mut scratch);
        assert_eq!(got, expect);
    }

    #[test]
    fn sorts_like_a_comparison_sort() {
        // A small LCG: no dependency for a deterministic spread of keys.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            x
        };
        for n in [0, 1, 2, 255, 256, 257, 1000, 40_000] {
            // Body pairs (two slot indices of 20 bits), full-width keys,
            // and keys with many repeats.
            check((0..n).map(|_| (next() >> 44) << 32 | next() >> 44).collect());
            check((0..n).map(|_| next()).collect());
            check((0..n).map(|_| next() % 7).collect());
        }
    }

    /// The radix passes (one thread) and the parallel sort (two) on the
    /// same large key sets.
    #[cfg(feature = "parallel")]
    #[test]
    fn both_ways_of_sorting_large_sets_agree() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            x
        };
        let sets: [Vec<u64>; 2] = [
            (0..PARALLEL + 5).map(|_| (next() >> 44) << 32 | next() >> 44).collect(),
            (0..PARALLEL * 2).map(|_| next() % 1000).collect(),
        ];
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for keys in &sets {
                pool.install(|| check(keys.clone()));
            }
        }
    }

    /// Keys whose varying bits sit high, low, or span the whole word, and
    /// spans that do not divide into equal digits.
    #[test]
    fn every_span_of_varying_bits_sorts() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        let mut next = move || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            x
        };
        for (low, span) in [(0, 1), (0, 13), (5, 34), (40, 24), (63, 1), (0, 64), (1, 63), (17, 37)] {
            let mask = if span == 64 { u64::MAX } else { ((1u64 << span) - 1) << low };
            check((0..3000).map(|_| next() & mask | 0x8000_0000_0000_0000 & !mask).collect());
        }
    }

    #[test]
    fn equal_and_sorted_inputs_stay_put() {
        check(vec![42; 1000]);
        check((0..5000).collect());
        check((0..5000).rev().collect());
    }
}
