//! Step 1's range check for all moving frames at once: a box around every
//! moving frame and the smallest reach among them, carried from step to
//! step (`range.rs` states the rule).
//!
//! A frame displaced by `d` stays in range when its box moved by `d` stays
//! within its reach. When every moving frame's box is inside a box `B`,
//! every displacement of the step inside `[lo, hi]` and every reach at
//! least `R`, then `B` moved by `[lo, hi]` inside `[-R, R]` proves every
//! frame stays in range: no pass over the frames (256 bytes each) is
//! needed; the span of the displacements is gathered as they are computed
//! (`StepMotion::span`). After the step `B` moves by the span grown to
//! hold zero (a parked body stays). Only when that proof
//! fails, or the frames changed (inserted, removed, re-posed, parked,
//! turned), is every frame tested, and `B` measured again in that pass.

#[cfg(feature = "parallel")]
use rayon::prelude::*;

use crate::aabb::Aabb;
use crate::frame::Frame;
use crate::range::reach;

/// Frames per parallel task of the full pass.
#[cfg(feature = "parallel")]
const CHUNK: usize = 2048;

/// A box around every moving frame, with the smallest precision bound of
/// their reaches, while the broad phase's count of changes is `edits`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RangeBound<const D: usize> {
    held: Option<Held<D>>,
}

#[derive(Clone, Copy, Debug)]
struct Held<const D: usize> {
    bound: Aabb<D>,
    reach_bound: f32,
    edits: u64,
}

impl<const D: usize> RangeBound<D> {
    /// True when the bound proves that no moving frame leaves its reach
    /// when displaced by any vector of the box `span`, the frames being as
    /// they were at change count `edits`.
    pub fn admits(&self, edits: u64, span: &Aabb<D>) -> bool {
        let Some(h) = self.held.filter(|h| h.edits == edits) else { return false };
        let r = reach(h.reach_bound);
        // `!(x > r)` would admit NaN: the comparisons are the positive ones.
        (0..D).all(|k| h.bound.min[k] + span.min[k] >= -r && h.bound.max[k] + span.max[k] <= r)
    }

    /// The bound after the moving frames were displaced by vectors of the
    /// box `span`, or not at all (a parked body stays).
    pub fn advanced(&mut self, span: &Aabb<D>) {
        if let Some(h) = &mut self.held {
            let mut span = *span;
            span.include(&[0.0; D]);
            for k in 0..D {
                h.bound.min[k] += span.min[k];
                h.bound.max[k] += span.max[k];
            }
        }
    }

    /// Forgets the bound (the frames turned): the next check tests every
    /// frame.
    pub fn forget(&mut self) {
        self.held = None;
    }

    /// Tests every frame of `frames` with `leaves` (true when it would leave
    /// its reach) and, when none leaves, measures the bound afresh (at
    /// change count `edits`, kept when `keep`). True when some frame leaves.
    pub fn test_each<L>(&mut self, frames: &[Frame<D>], edits: u64, keep: bool, leaves: L) -> bool
    where
        L: Fn(usize, &Frame<D>) -> bool + Sync,
    {
        let one =
            |(i, f): (usize, &Frame<D>)| Measure { leaves: leaves(i, f), bound: f.aabb(), reach: f.reach_bound() };
        #[cfg(feature = "parallel")]
        let m = frames.par_iter().enumerate().with_min_len(CHUNK).map(one).reduce(Measure::empty, Measure::join);
        #[cfg(not(feature = "parallel"))]
        let m = frames.iter().enumerate().map(one).fold(Measure::empty(), Measure::join);
        self.held = (keep && !m.leaves).then_some(Held { bound: m.bound, reach_bound: m.reach, edits });
        m.leaves
    }

    /// Panics unless the bound, while held at change count `edits`,
    /// contains every frame's box and is within every frame's reach bound.
    pub fn validate(&self, edits: u64, frames: &[Frame<D>]) {
        let Some(h) = self.held.filter(|h| h.edits == edits) else { return };
        for f in frames {
            let b = f.aabb();
            let inside = (0..D).all(|k| h.bound.min[k] <= b.min[k] && b.max[k] <= h.bound.max[k]);
            assert!(inside, "a moving frame's box {b:?} left the range check's bound {:?}", h.bound);
            assert!(f.reach_bound() >= h.reach_bound, "a moving frame's reach is below the bound's");
        }
    }
}

/// What the full pass gathers: whether a frame leaves, the union of the
/// boxes and the smallest reach bound.
#[derive(Clone, Copy)]
struct Measure<const D: usize> {
    leaves: bool,
    bound: Aabb<D>,
    reach: f32,
}

impl<const D: usize> Measure<D> {
    fn empty() -> Self {
        Measure { leaves: false, bound: Aabb::EMPTY, reach: f32::INFINITY }
    }

    fn join(self, other: Self) -> Self {
        Measure {
            leaves: self.leaves | other.leaves,
            bound: self.bound.union(&other.bound),
            reach: self.reach.min(other.reach),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(at: f64) -> Frame<2> {
        Frame::from_aabb([at, 0.0], [at + 1.0, 1.0]).unwrap()
    }

    #[test]
    fn the_bound_admits_what_stays_in_range_and_nothing_else() {
        let frames = [unit(0.0), unit(5.0)];
        let mut b = RangeBound::default();
        let span = |min: [f64; 2], max: [f64; 2]| Aabb { min, max };
        let still = span([0.0; 2], [0.0; 2]);
        assert!(!b.admits(0, &still), "nothing held yet");
        assert!(!b.test_each(&frames, 7, true, |_, _| false));
        assert!(b.admits(7, &span([-1.0; 2], [1.0; 2])));
        assert!(!b.admits(8, &span([-1.0; 2], [1.0; 2])), "the frames changed since");
        let r = frames[0].reach();
        assert!(!b.admits(7, &span([0.0; 2], [r, 0.0])), "the far frame would leave");
        assert!(!b.admits(7, &span([f64::NAN, 0.0], [0.0; 2])), "NaN proves nothing");
        // Every body moving right and up: the bound still keeps zero (a
        // parked body stays), so its low side does not move.
        b.advanced(&span([1.0, 0.25], [3.0, 0.5]));
        b.validate(7, &[unit(0.0), unit(8.0)]);
        b.advanced(&span([-2.0, 0.0], [3.0, 0.5]));
        b.validate(7, &[unit(-2.0), unit(11.0)]);
        // A frame that leaves keeps no bound.
        assert!(b.test_each(&frames, 9, true, |i, _| i == 1));
        assert!(!b.admits(9, &still));
        b.forget();
        assert!(!b.admits(7, &still));
    }

    #[test]
    #[should_panic(expected = "left the range check's bound")]
    fn validate_sees_a_frame_outside_the_bound() {
        let mut b = RangeBound::default();
        b.test_each(&[unit(0.0)], 1, true, |_, _| false);
        b.validate(1, &[unit(3.0)]);
    }
}
