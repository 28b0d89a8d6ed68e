//! A tiny deterministic generator for `scatter` (no dependency, the same
//! numbers on every platform).

/// SplitMix64 (Steele, Lea and Flood 2014): 64 bits of state, passes
/// BigCrush, plenty for placing bodies.
///
/// ```
/// use fmbgrid::scene::SplitMix64;
/// // The reference outputs of SplitMix64 for seed 0, on every machine.
/// let mut a = SplitMix64::new(0);
/// assert_eq!([a.next_u64(), a.next_u64(), a.next_u64()], [0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f]);
/// let x = a.range(2.0, 3.0);
/// assert!((2.0..3.0).contains(&x));
/// ```
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }

    /// Log-uniform in `[lo, hi)` (both positive).
    pub fn log_range(&mut self, lo: f64, hi: f64) -> f64 {
        lo * (hi / lo).powf(self.next_f64())
    }
}
