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

use super::store::Meta;
use super::{FrameId, World};
use crate::error::WorldError;
use crate::frame::Frame;
use crate::narrow::gap_at_end;
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
    /// [`WorldError::BadTolerance`] for a negative or non-finite `delta`.
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
        self.refresh();
        let moving = &self.moving;
        let half = delta / 2.0;
        let item = |i: usize| (moving.frames[i].aabb().grown(half), i as u32);
        let body = |i: usize| moving.meta[i].rank;
        let mut list = std::mem::take(&mut self.proximity_grid);
        list.build(self.cell, moving.len(), item, Some(&body));
        let mut out = std::mem::take(&mut self.proximity);
        out.clear();
        let (fixed, static_grid) = (&self.fixed, &self.static_grid);
        for p in 0..list.len() {
            let i = list.item(p) as usize;
            let (f, m) = (&moving.frames[i], &moving.meta[i]);
            list.partners(p, |q| {
                let j = list.item(q) as usize;
                within(delta, (f, m), (&moving.frames[j], &moving.meta[j]), &mut out);
            });
            static_grid.query(&f.aabb().grown(delta), |k| {
                within(delta, (f, m), (&fixed.frames[k as usize], &fixed.meta[k as usize]), &mut out);
            });
        }
        out.sort_unstable_by_key(|x| (x.a, x.b));
        self.proximity_grid = list;
        self.proximity = out;
        Ok(&self.proximity)
    }
}

/// Appends the pair when its frames are at most `delta` apart.
fn within<const D: usize>(
    delta: f64,
    (f, m): (&Frame<D>, &Meta),
    (g, n): (&Frame<D>, &Meta),
    out: &mut Vec<Proximity<D>>,
) {
    if !m.pairs_with(n) || gap_at_end(f, g) > delta {
        return;
    }
    let d = distance(f, g);
    if d.distance <= delta {
        let (a, b) = (m.id(), n.id());
        out.push(if a < b {
            Proximity { a, b, distance: d.distance, on_a: d.on_a, on_b: d.on_b }
        } else {
            Proximity { a: b, b: a, distance: d.distance, on_a: d.on_b, on_b: d.on_a }
        });
    }
}
