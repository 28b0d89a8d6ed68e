//! Step statistics streamed in constant memory, whatever the number of
//! steps: exact minimum, maximum, total and pair counts, and the median
//! step time from a log-spaced histogram (bins 0.1% wide).

/// Bins per factor of `e` in step time: bins are `1 / BINS_PER_E ≈ 0.1%`
/// wide.
const BINS_PER_E: f64 = 1000.0;
/// The histogram covers 1 ns to 10^7 ms (about 3 hours) per step; times
/// outside fall in its first or last bin (min and max stay exact).
const LOWEST_MS: f64 = 1e-6;
const BINS: usize = 29_934; // ⌈ln(1e13) · BINS_PER_E⌉

/// Streamed statistics of a run's steps.
#[derive(Clone, Debug)]
pub(super) struct StepStats {
    pub steps: usize,
    pub ms_min: f64,
    pub ms_max: f64,
    pub ms_total: f64,
    pub pairs_total: u128,
    pub pairs_max: usize,
    histogram: Vec<u64>,
}

impl StepStats {
    pub fn new() -> Self {
        StepStats {
            steps: 0,
            ms_min: f64::INFINITY,
            ms_max: 0.0,
            ms_total: 0.0,
            pairs_total: 0,
            pairs_max: 0,
            histogram: vec![0; BINS],
        }
    }

    /// One step of `ms` milliseconds that found `pairs` contacts.
    pub fn add(&mut self, ms: f64, pairs: usize) {
        self.steps += 1;
        self.ms_min = self.ms_min.min(ms);
        self.ms_max = self.ms_max.max(ms);
        self.ms_total += ms;
        self.pairs_total += pairs as u128;
        self.pairs_max = self.pairs_max.max(pairs);
        self.histogram[bin(ms)] += 1;
    }

    /// Mean contacts per step (0 without steps).
    pub fn pairs_mean(&self) -> f64 {
        self.pairs_total as f64 / self.steps.max(1) as f64
    }

    /// The median step time, the upper one for an even count, to 0.1%
    /// (the middle of its bin, within the exact minimum and maximum); 0
    /// without steps.
    pub fn ms_median(&self) -> f64 {
        if self.steps == 0 {
            return 0.0;
        }
        let rank = (self.steps / 2) as u64; // 0-based
        let mut seen = 0;
        for (k, &n) in self.histogram.iter().enumerate() {
            seen += n;
            if seen > rank {
                let middle = LOWEST_MS * ((k as f64 + 0.5) / BINS_PER_E).exp();
                return middle.clamp(self.ms_min, self.ms_max);
            }
        }
        self.ms_max
    }

    /// The fastest step (0 without steps).
    pub fn ms_min(&self) -> f64 {
        if self.steps == 0 { 0.0 } else { self.ms_min }
    }
}

fn bin(ms: f64) -> usize {
    let k = ((ms / LOWEST_MS).ln() * BINS_PER_E).floor();
    // NaN and negative (a zero time) go to the first bin.
    if k >= 0.0 { (k as usize).min(BINS - 1) } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_within_a_bin_of_the_exact_one() {
        let mut rng = crate::scene::SplitMix64::new(3);
        for n in [1, 2, 3, 10, 101, 5000] {
            let mut stats = StepStats::new();
            let mut times = Vec::new();
            for _ in 0..n {
                let ms = rng.log_range(1e-3, 1e3);
                stats.add(ms, 2);
                times.push(ms);
            }
            times.sort_by(f64::total_cmp);
            let exact = times[n / 2];
            let got = stats.ms_median();
            assert!((got / exact - 1.0).abs() < 1.1e-3, "n {n}: {got} vs {exact}");
            assert_eq!((stats.ms_min(), stats.ms_max), (times[0], times[n - 1]));
            assert_eq!(stats.pairs_mean(), 2.0);
        }
        assert_eq!(StepStats::new().ms_median(), 0.0);
        assert_eq!(BINS, ((1e13f64).ln() * BINS_PER_E).ceil() as usize);
    }

    #[test]
    fn extreme_times_stay_in_the_histogram() {
        let mut stats = StepStats::new();
        for ms in [0.0, 1e-12, 1e12, f64::MAX] {
            stats.add(ms, 0);
        }
        assert_eq!(stats.steps, 4);
        let m = stats.ms_median();
        assert!(stats.ms_min() <= m && m <= stats.ms_max, "{m}");
        assert_eq!((stats.ms_min(), stats.ms_max), (0.0, f64::MAX));
    }
}
