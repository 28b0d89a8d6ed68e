//! Sorting a step's body-pair keys: a least-significant-digit radix sort.
//!
//! Each step sorts one `u64` key per contact (two body slots packed) to
//! find its body pairs. A comparison sort spends `log₂ n` comparisons and
//! branch misses a key on these random keys; the radix sort moves each key
//! once per byte that varies among the keys (slot indices below 2²⁴ vary
//! in at most six of the eight), with no comparison at all. One pass counts
//! every byte's histogram at once; bytes equal in every key are skipped.
//! With several threads, large key sets are sorted in parallel instead.

/// Bytes of a key.
const DIGITS: usize = 8;

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
    let mut counts = [[0u32; 256]; DIGITS];
    for &k in keys.iter() {
        for (d, count) in counts.iter_mut().enumerate() {
            count[(k >> (8 * d)) as usize & 0xff] += 1;
        }
    }
    scratch.clear();
    scratch.resize(n, 0);
    for (d, count) in counts.iter().enumerate() {
        // A byte every key shares does not reorder them.
        if count.iter().any(|&c| c as usize == n) {
            continue;
        }
        let mut start = [0u32; 256];
        let mut sum = 0u32;
        for (s, &c) in start.iter_mut().zip(count) {
            *s = sum;
            sum += c;
        }
        for &k in keys.iter() {
            let b = (k >> (8 * d)) as usize & 0xff;
            scratch[start[b] as usize] = k;
            start[b] += 1;
        }
        std::mem::swap(keys, scratch);
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

    #[test]
    fn equal_and_sorted_inputs_stay_put() {
        check(vec![42; 1000]);
        check((0..5000).collect());
        check((0..5000).rev().collect());
    }
}
