//! Boxes as the grid stores them: rounded outward to `f32`.

use crate::aabb::Aabb;

/// An axis-aligned box rounded outward to `f32`: a superset of the exact
/// box in half the bytes. The grid only prunes with it (the narrow phase
/// decides exactly), and cells, ranges and the cover entries' minimum
/// corners are all computed from these same rounded values, so the grid
/// stays consistent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct GridBox<const D: usize> {
    min: [f32; D],
    max: [f32; D],
}

/// The largest `f32` not above `x`.
///
/// Without branches: the rounding goes either way about half the time, and
/// a mispredicted branch per corner cost more than the rest of a box.
#[inline(always)]
fn down(x: f64) -> f32 {
    let r = x as f32;
    let bits = r.to_bits();
    // The `f32` below `r`: one unit less in magnitude when `r` is positive,
    // one more when negative (all ones or zero in `sign`). `r` is never
    // `+0.0` here: a negative `x` rounds to `-0.0`, whose neighbour below
    // is the negative subnormal this gives.
    let sign = ((bits as i32) >> 31) as u32;
    let below = bits.wrapping_add(!sign | 1);
    f32::from_bits(if f64::from(r) > x { below } else { bits })
}

/// The smallest `f32` not below `x` (as [`down`]: never `-0.0` here).
#[inline(always)]
fn up(x: f64) -> f32 {
    let r = x as f32;
    let bits = r.to_bits();
    let sign = ((bits as i32) >> 31) as u32;
    let above = bits.wrapping_add(sign | 1);
    f32::from_bits(if f64::from(r) < x { above } else { bits })
}

impl<const D: usize> GridBox<D> {
    /// `b` rounded outward.
    #[inline(always)]
    pub fn new(b: &Aabb<D>) -> Self {
        GridBox { min: b.min.map(down), max: b.max.map(up) }
    }

    /// The minimum corner.
    #[inline(always)]
    pub fn min(&self) -> [f64; D] {
        self.min.map(f64::from)
    }

    /// The maximum corner.
    #[inline(always)]
    pub fn max(&self) -> [f64; D] {
        self.max.map(f64::from)
    }

    /// The corners as stored.
    #[inline(always)]
    pub fn min_f32(&self) -> [f32; D] {
        self.min
    }

    /// The corners as stored.
    #[inline(always)]
    pub fn max_f32(&self) -> [f32; D] {
        self.max
    }

    /// A box from corners already rounded.
    #[inline(always)]
    pub fn from_f32(min: [f32; D], max: [f32; D]) -> Self {
        GridBox { min, max }
    }

    /// Closed overlap test, without branches (the outcome is unpredictable
    /// where the grids call it).
    #[inline(always)]
    pub fn overlaps(&self, o: &Self) -> bool {
        (0..D).fold(true, |v, i| v & (self.min[i] <= o.max[i]) & (o.min[i] <= self.max[i]))
    }

    /// True when `o` is inside this box (closed).
    #[inline(always)]
    pub fn contains(&self, o: &Self) -> bool {
        (0..D).fold(true, |v, i| v & (self.min[i] <= o.min[i]) & (o.max[i] <= self.max[i]))
    }

    /// The empty box: contains nothing, overlaps nothing.
    pub const EMPTY: Self = GridBox { min: [f32::INFINITY; D], max: [f32::NEG_INFINITY; D] };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_outward() {
        for x in [0.1, -0.1, 1e15 + 0.3, -7.000000001, 3.0, 1e-30, -1e-30, 1e-50, -1e-50, 0.0, -0.0, 1e300, -1e300] {
            let b = GridBox::new(&Aabb { min: [x], max: [x] });
            // The nearest `f32` on each side, as `next_down`/`next_up` give.
            let r = x as f32;
            let (lo, hi) = if f64::from(r) > x {
                (r.next_down(), r)
            } else if f64::from(r) < x {
                (r, r.next_up())
            } else {
                (r, r)
            };
            assert_eq!((b.min_f32()[0], b.max_f32()[0]), (lo, hi), "{x}");
            let b = Aabb { min: b.min(), max: b.max() };
            assert!(b.min[0] <= x && x <= b.max[0], "{x}");
        }
        // Random bit patterns of every magnitude and sign, against the
        // branching reference (`next_down`/`next_up`).
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..200_000 {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let x = f64::from_bits(state);
            if !x.is_finite() {
                continue;
            }
            let b = GridBox::new(&Aabb { min: [x], max: [x] });
            let r = x as f32;
            let lo = if f64::from(r) > x { r.next_down() } else { r };
            let hi = if f64::from(r) < x { r.next_up() } else { r };
            assert_eq!((b.min_f32()[0].to_bits(), b.max_f32()[0].to_bits()), (lo.to_bits(), hi.to_bits()), "{x}");
        }
    }
}
