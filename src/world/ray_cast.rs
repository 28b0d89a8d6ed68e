//! Ray and point queries on the world: `cast_ray` (the first frame a ray
//! meets), `cast_ray_all` (every frame it meets) and `query_point`.
//!
//! A ray walks the cell lists (`grid/ray_walk.rs`: the fixed frames' list,
//! and the step's moving list while it is current, whose swept boxes
//! contain the frames' boxes now), cell by cell along the ray on each
//! level, and each frame found is tested exactly (`query/ray.rs`). Moving
//! frames kept in the pair set's persistent grid are those whose fat boxes
//! meet the ray's box. A frame
//! the ray enters in a cell is listed in that cell's block, so once a cell
//! starts beyond the best hit so far, no later frame can beat it and the
//! walk stops. Frames outside the lists (of large moving bodies, or all of
//! them while a list is out of date) are tested one by one. A ray longer
//! (in cells) than the world has frames tests every frame once instead:
//! the cost is bounded by the world's size, whatever the ray.

use super::store::Store;
use super::{FrameId, World, check_vector};
use crate::aabb::Aabb;
use crate::error::WorldError;
use crate::frame::Frame;
use crate::grid::walk_ray;
use crate::query::RayHit;
use crate::query::ray::cast as ray_cast;

impl<const D: usize> World<D> {
    /// The first frame the ray `origin + s · dir`, `0 ≤ s ≤ max_time`, meets
    /// (frames at rest where they are now; closed: touching counts), with
    /// the hit; ties in time go to the smaller [`FrameId`].
    ///
    /// # Errors
    /// [`WorldError::BadNumber`] for a coordinate or `max_time` that is not
    /// a finite number (`max_time` also not negative) within ±1e15,
    /// [`WorldError::ZeroRay`] for a zero direction.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let wall = world.insert(Body::fixed(vec![Frame2::from_aabb([5.0, -1.0], [6.0, 1.0])?]))?;
    /// let (id, hit) = world.cast_ray([0.0, 0.0], [1.0, 0.0], 100.0)?.unwrap();
    /// assert_eq!((id.body, hit.time, hit.normal), (wall, 5.0, [-1.0, 0.0]));
    /// assert!(world.cast_ray([0.0, 0.0], [0.0, 1.0], 100.0)?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cast_ray(
        &self,
        origin: [f64; D],
        dir: [f64; D],
        max_time: f64,
    ) -> Result<Option<(FrameId, RayHit<D>)>, WorldError> {
        check_ray(&origin, &dir, max_time)?;
        let mut best: Option<(FrameId, RayHit<D>)> = None;
        self.walk_ray(origin, dir, max_time, |id, f| {
            if let Some(hit) = ray_cast(f, origin, dir, max_time)
                && best.is_none_or(|(b, h)| (hit.time, id) < (h.time, b))
            {
                best = Some((id, hit));
            }
            best.map_or(max_time, |(_, h)| h.time)
        });
        Ok(best)
    }

    /// Every frame the ray `origin + s · dir`, `0 ≤ s ≤ max_time`, meets,
    /// with its hit, by time (then [`FrameId`]).
    ///
    /// # Errors
    /// As [`World::cast_ray`].
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// for x in [2.0, 5.0, 8.0] {
    ///     world.insert(Body::fixed(vec![Frame2::from_aabb([x, -1.0], [x + 1.0, 1.0])?]))?;
    /// }
    /// let hits = world.cast_ray_all([0.0, 0.0], [1.0, 0.0], 6.0)?;
    /// assert_eq!(hits.iter().map(|(_, h)| h.time).collect::<Vec<_>>(), [2.0, 5.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cast_ray_all(
        &self,
        origin: [f64; D],
        dir: [f64; D],
        max_time: f64,
    ) -> Result<Vec<(FrameId, RayHit<D>)>, WorldError> {
        check_ray(&origin, &dir, max_time)?;
        let mut hits = Vec::new();
        self.walk_ray(origin, dir, max_time, |id, f| {
            if let Some(hit) = ray_cast(f, origin, dir, max_time) {
                hits.push((id, hit));
            }
            max_time
        });
        hits.sort_unstable_by(|(a, h): &(FrameId, RayHit<D>), (b, k)| h.time.total_cmp(&k.time).then(a.cmp(b)));
        // A frame may be visited twice (rays through edges or corners of
        // cells): its hits are equal, hence adjacent once sorted.
        hits.dedup_by_key(|(id, _)| *id);
        Ok(hits)
    }

    /// The frames (at rest where they are now) that contain point `p`,
    /// boundary included (within 1e-12 of their size), sorted.
    ///
    /// # Errors
    /// [`WorldError::BadNumber`] for a coordinate that is not a finite
    /// number within ±1e15.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let h = world.insert(Body::fixed(vec![Frame2::triangle([0.0, 0.0], [2.0, 0.0], [0.0, 2.0])?]))?;
    /// assert_eq!(world.query_point([0.5, 0.5])?.len(), 1);
    /// assert!(world.query_point([1.5, 1.5])?.is_empty()); // in the box, not the triangle
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_point(&self, p: [f64; D]) -> Result<Vec<FrameId>, WorldError> {
        check_vector("point", &p)?;
        let mut ids = self.query_aabb(&Aabb { min: p, max: p });
        ids.retain(|&id| self.frame(id).is_ok_and(|f| f.contains_point(&p, 0.0)));
        Ok(ids)
    }

    /// Calls `visit(id, frame)` for every frame (at rest where it is now)
    /// whose box may meet the ray `origin + s · dir`, `0 ≤ s ≤ max_time`,
    /// at least once (rarely twice); `visit` returns the ray parameter
    /// beyond which nothing more is wanted.
    fn walk_ray(
        &self,
        origin: [f64; D],
        dir: [f64; D],
        max_time: f64,
        mut visit: impl FnMut(FrameId, &Frame<D>) -> f64,
    ) {
        let speed = dir.iter().map(|x| x * x).sum::<f64>().sqrt();
        // A ray longer in cells than the world has frames costs more walked
        // than every frame tested once: test them all.
        let (fixed, moving) = (&self.broad.fixed, &self.broad.moving);
        let frames = fixed.len() + moving.len();
        let all = |store: &Store<D>, visit: &mut dyn FnMut(FrameId, &Frame<D>) -> f64| {
            for (f, m) in store.live() {
                visit(m.id(), f);
            }
        };
        if max_time * speed / self.broad.cell.base() > frames.max(64) as f64 {
            all(fixed, &mut visit);
            all(moving, &mut visit);
            return;
        }
        match self.broad.fixed_list() {
            Some(list) => walk_ray(list, &origin, &dir, max_time, |p| {
                let k = list.item(p) as usize;
                visit(fixed.meta[k].id(), &fixed.frames[k])
            }),
            None => all(fixed, &mut visit),
        }
        // The pair set's fat boxes: those the ray's box meets.
        let reach = Aabb { min: origin, max: origin }.swept(&dir.map(|x| x * max_time));
        if self.broad.query_fat(&reach, |i| {
            visit(moving.meta[i as usize].id(), &moving.frames[i as usize]);
        }) {
            return;
        }
        let Some(list) = self.broad.moving_list() else {
            all(moving, &mut visit);
            return;
        };
        // The list's ids are store indices; frames of large bodies may not
        // be in it (`BroadPhase::query_box`).
        walk_ray(list, &origin, &dir, max_time, |p| {
            let i = list.item(p) as usize;
            if self.broad.unlisted(i) { max_time } else { visit(moving.meta[i].id(), &moving.frames[i]) }
        });
        for i in (0..moving.len()).filter(|&i| self.broad.unlisted(i)) {
            visit(moving.meta[i].id(), &moving.frames[i]);
        }
    }
}

/// A ray's numbers: finite, within range, a non-zero direction.
fn check_ray<const D: usize>(origin: &[f64; D], dir: &[f64; D], max_time: f64) -> Result<(), WorldError> {
    check_vector("ray origin", origin)?;
    check_vector("ray direction", dir)?;
    check_vector("ray length", &[max_time])?;
    if max_time < 0.0 {
        return Err(WorldError::BadNumber { what: "ray length", value: max_time });
    }
    if dir.iter().all(|&x| x == 0.0) {
        return Err(WorldError::ZeroRay);
    }
    Ok(())
}
