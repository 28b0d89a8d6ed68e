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
#[inline(always)]
fn down(x: f64) -> f32 {
    let r = x as f32;
    if f64::from(r) > x { r.next_down() } else { r }
}

/// The smallest `f32` not below `x`.
#[inline(always)]
fn up(x: f64) -> f32 {
    let r = x as f32;
    if f64::from(r) < x { r.next_up() } else { r }
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

    /// Closed overlap test.
    #[cfg(test)]
    pub fn intersects(&self, o: &Self) -> bool {
        (0..D).all(|i| self.min[i] <= o.max[i] && o.min[i] <= self.max[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_outward() {
        for x in [0.1, -0.1, 1e15 + 0.3, -7.000000001, 3.0, 1e-30] {
            let b = GridBox::new(&Aabb { min: [x], max: [x] });
            let b = Aabb { min: b.min(), max: b.max() };
            assert!(b.min[0] <= x && x <= b.max[0], "{x}");
            assert!(b.max[0] - b.min[0] <= 2.0 * f64::from(f32::EPSILON) * x.abs(), "{x}");
        }
    }
}
