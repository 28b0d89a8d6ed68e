//! `World::pairs_within(δ)`: every pair of frames closer than a safety
//! distance, with the distance and the closest points (the tolerance query
//! of Mantel's thesis).
//!
//! Two frames at most `δ` apart have boxes at most `δ` apart on every axis,
//! so boxes grown by `δ / 2` overlap: the moving frames' boxes, grown so,
//! go into a cell list of their own, and each queries the fixed frames'
//! list with its box grown by `δ` (the fixed list is the step's, built once
//! per change of the fixed set). Each candidate pair then meets a cheap
//! exact filter, the face-normal gap of `narrow/separation.rs`: a lower
//! bound of the distance, so a pair it puts beyond `δ` is beyond `δ`, and
//! it never rejects a pair within it. The rest get their exact distance
//! (`query/distance.rs`). Pairs of frames of one body, of two fixed bodies
//! and pairs the collision filters refuse are left out, as in `step`.
//!
//! Bodies of many frames (meshes) go through the step's body-level pass
//! first: a frame is listed only if its grown box reaches another body's
//! box (grown by `δ`), and queries only the fixed frames its body reaches,
//! so two meshes far apart cost little more than their boxes.

use super::broad_phase::FIXED_MANY;
use super::store::Meta;
use super::{FrameId, World};
use crate::error::WorldError;
use crate::fallible::room_for_one;
use crate::frame::Frame;
use crate::grid::Spreads;
use crate::narrow::gap_exceeding;
use crate::query::distance;

/// Two frames within the tolerance of a [`World::pairs_within`] query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Proximity<const D: usize> {
    /// The first frame of the pair (`a < b`).
    pub a: FrameId,
    /// The second frame.
    pub b: FrameId,
    /// Their Euclidean distance: `0` when they touch or overlap.
    pub distance: f64,
    /// A point of `a` closest to `b`.
    pub on_a: [f64; D],
    /// A point of `b` closest to `a`.
    pub on_b: [f64; D],
}

impl<const D: usize> World<D> {
    /// Every pair of frames at most `delta` apart (Euclidean distance, `0`
    /// for frames that touch or overlap), with their distance and closest
    /// points, sorted by `(a, b)`: each pair once, the same answer whatever
    /// the order of insertion. Pairs within one body, between two fixed
    /// bodies, or refused by the collision filters are left out, as in
    /// [`World::step`]. Frames are taken where they are now (as the next
    /// step starts); bodies inserted or removed since the last step are
    /// taken into account.
    ///
    /// # Errors
    /// [`WorldError::BadTolerance`] for a negative or non-finite `delta`;
    /// [`WorldError::OutOfMemory`] when the pairs within `delta` do not fit
    /// in memory (the world is unchanged).
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, 0.0], [10.0, 1.0])?]))?;
    /// world.insert(Body::moving(vec![Frame2::from_aabb([2.0, 1.25], [3.0, 2.0])?]))?;
    /// assert!(world.pairs_within(0.1)?.is_empty());
    /// let near = world.pairs_within(0.5)?;
    /// assert_eq!(near.len(), 1);
    /// assert!((near[0].distance - 0.25).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pairs_within(&mut self, delta: f64) -> Result<&[Proximity<D>], WorldError> {
        if !(delta.is_finite() && delta >= 0.0) {
            return Err(WorldError::BadTolerance { delta });
        }
        self.broad.refresh(self.config.cell_size, &mut self.slots)?;
        self.broad.list_grown(delta)?;
        let (broad, out) = (&self.broad, &mut self.proximity);
        let (moving, list) = (&broad.moving, broad.grown_list());
        out.clear();
        let frame = |i: usize| (&moving.frames[i], &moving.meta[i]);
        let mut fits = true;
        let mut spreads = Spreads::default();
        for p in 0..list.len() {
            let f = frame(list.item(p) as usize);
            list.partners(p, &mut spreads, |q| fits = fits && within(delta, f, frame(list.item(q) as usize), out));
        }
        if !broad.static_grid.is_empty() {
            let fixed = |k: u32| (&broad.fixed.frames[k as usize], &broad.fixed.meta[k as usize]);
            for i in 0..moving.len() {
                let (f, m) = frame(i);
                match broad.body_fixed(m.rank) {
                    [FIXED_MANY, ..] => {
                        broad.static_grid.query(&f.aabb().grown(delta), |k| {
                            fits = fits && within(delta, (f, m), fixed(k), out);
                        });
                    }
                    few => {
                        let b = f.aabb().grown(delta);
                        for &k in few.iter().filter(|&&k| b.intersects(&broad.fixed.frames[k as usize].aabb())) {
                            fits = fits && within(delta, (f, m), fixed(k), out);
                        }
                    }
                }
            }
        }
        if !fits {
            let bytes = out.len().saturating_mul(2 * size_of::<Proximity<D>>());
            // Given back: the next query starts small again.
            self.proximity = Vec::new();
            return Err(WorldError::OutOfMemory { bytes });
        }
        out.sort_unstable_by_key(|x| (x.a, x.b));
        self.debug_validate();
        Ok(&self.proximity)
    }
}

/// Appends the pair when its frames are at most `delta` apart.
/// False when the answer no longer fits in memory (a tolerance that puts
/// nearly every pair of a large world within reach): the buffer grows
/// fallibly, and the query reports it instead of aborting.
fn within<const D: usize>(
    delta: f64,
    (f, m): (&Frame<D>, &Meta),
    (g, n): (&Frame<D>, &Meta),
    out: &mut Vec<Proximity<D>>,
) -> bool {
    if !m.pairs_with(n) || gap_exceeding(f, g, delta).is_some() {
        return true;
    }
    let d = distance(f, g);
    if d.distance > delta {
        return true;
    }
    if !room_for_one(out) {
        return false;
    }
    let (a, b) = (m.id(), n.id());
    out.push(if a < b {
        Proximity { a, b, distance: d.distance, on_a: d.on_a, on_b: d.on_b }
    } else {
        Proximity { a: b, b: a, distance: d.distance, on_a: d.on_b, on_b: d.on_a }
    });
    true
}
