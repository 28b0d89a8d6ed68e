//! The supported range: one rule for frames, poses and steps.
//!
//! A frame is supported where every coordinate of its box (swept, when it
//! moves) is at most its **reach** in magnitude:
//!
//! ```text
//! reach = min(MAX_COORDINATE, shortest component length / MIN_RELATIVE_LENGTH)
//!       = min(1e15, 1e12 · ℓ_min)
//! ```
//!
//! (the second bound stored as an `f32`, rounded up: at most 1.2e-7 of it
//! above, which changes nothing the bound is for). The first bound keeps every product
//! the narrow phase forms far from `f64` overflow; the second keeps the
//! frame's smallest feature at least 1e-12 of its coordinates, so that its
//! vertices are distinct numbers and the answers keep their accuracy. A unit
//! box is supported within ±1e12, a box of 1e-3 within ±1e9.
//!
//! The rule is checked in three places, always the same way:
//! - [`Frame::new`](crate::Frame::new) and every constructor (and
//!   [`Frame::with_velocity`](crate::Frame::with_velocity), on the swept box):
//!   [`FrameError::OutOfRange`](crate::FrameError::OutOfRange);
//! - placing a body's frames at its pose (`World::insert`, `World::set_pose`):
//!   the same error, for the placed frame;
//! - `World::step`, for each moving frame's box displaced by its body's
//!   motion over the step: a body that would leave the range is a runaway,
//!   parked or refused as [`Runaway`](crate::Runaway) says.

use crate::aabb::Aabb;
use crate::limits::{MAX_COORDINATE, MIN_RELATIVE_LENGTH};

/// The precision bound of a frame whose shortest component has length
/// `shortest` (`1e12 · shortest`), rounded up to an `f32`; the reach is
/// [`reach`] of it.
pub(crate) fn precision_bound(shortest: f64) -> f32 {
    let r = shortest / MIN_RELATIVE_LENGTH;
    let f = r as f32;
    // `as` rounds to nearest: step up when that went down.
    if f64::from(f) < r { f.next_up() } else { f }
}

/// The reach from a stored precision bound (see the module docs).
#[inline(always)]
pub(crate) fn reach(bound: f32) -> f64 {
    MAX_COORDINATE.min(f64::from(bound))
}

/// The first coordinate of `b` displaced by `d` that lies beyond the reach
/// (`None` when the whole box is within it).
pub(crate) fn beyond<const D: usize>(b: &Aabb<D>, d: &[f64; D], bound: f32) -> Option<f64> {
    let reach = reach(bound);
    (0..D).flat_map(|i| [b.min[i] + d[i], b.max[i] + d[i]]).find(|&x| !within(x, reach))
}

/// True when `b` displaced by `d` leaves the reach (the hot path's test).
#[inline(always)]
pub(crate) fn leaves<const D: usize>(b: &Aabb<D>, d: &[f64; D], bound: f32) -> bool {
    let reach = reach(bound);
    // Non-short-circuit: the answer is nearly always false.
    (0..D).fold(false, |out, i| out | !within(b.min[i] + d[i], reach) | !within(b.max[i] + d[i], reach))
}

/// `|x| <= reach`, false for NaN.
#[inline(always)]
fn within(x: f64, reach: f64) -> bool {
    x.abs() <= reach
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_is_rounded_up_below_1e15_and_capped_at_it() {
        for x in [1.0, 0.3, 1.7e-3, 9.99e2, 17.6, 5e-9] {
            let r = reach(precision_bound(x));
            assert!(r >= x / MIN_RELATIVE_LENGTH && r <= x / MIN_RELATIVE_LENGTH * (1.0 + 1.2e-7), "{x}: {r}");
        }
        assert_eq!(reach(precision_bound(1e3)), MAX_COORDINATE);
        assert_eq!(reach(precision_bound(1e27)), MAX_COORDINATE);
    }

    #[test]
    fn beyond_names_the_coordinate_and_leaves_agrees() {
        let b = Aabb { min: [0.0, -1.0], max: [1.0, 1.0] };
        assert_eq!(beyond(&b, &[0.0, 0.0], 10.0), None);
        assert_eq!(beyond(&b, &[0.0, -9.5], 10.0), Some(-10.5));
        assert_eq!(beyond(&b, &[f64::NAN, 0.0], 10.0).map(f64::is_nan), Some(true));
        for d in [[0.0, 0.0], [0.0, -9.5], [9.0, 0.0], [9.5, 0.0], [f64::INFINITY, 0.0]] {
            assert_eq!(leaves(&b, &d, 10.0), beyond(&b, &d, 10.0).is_some(), "{d:?}");
        }
    }
}
