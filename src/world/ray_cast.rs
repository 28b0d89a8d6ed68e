//! Ray and point queries on the world: `cast_ray` (the first frame a ray
//! meets), `cast_ray_all` (every frame it meets) and `query_point`.
//!
//! A ray is walked in segments one cell long; each segment's box is a box
//! query on the cell lists (`World::query_aabb`: the fixed frames' list,
//! and the step's moving list while it is current), and each frame found
//! is tested exactly (`query/ray.rs`). A frame the ray enters in a segment
//! overlaps that segment's box, so once a segment ends beyond the best hit
//! so far, no later frame can beat it and the walk stops. A ray longer (in
//! cells) than the world has frames tests every frame once instead: the
//! cost is bounded by the world's size, whatever the ray.

use super::{FrameId, World, check_vector};
use crate::aabb::Aabb;
use crate::error::WorldError;
use crate::query::{RayHit, ray_cast};

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
        self.walk_ray(origin, dir, max_time, |end, ids| {
            for &id in ids {
                if let Ok(f) = self.frame(id)
                    && let Some(hit) = ray_cast(&f, origin, dir, max_time)
                    && best.is_none_or(|(b, h)| (hit.time, id) < (h.time, b))
                {
                    best = Some((id, hit));
                }
            }
            best.is_none_or(|(_, h)| h.time > end)
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
        let mut seen = Vec::new();
        self.walk_ray(origin, dir, max_time, |_, ids| {
            seen.extend_from_slice(ids);
            true
        });
        seen.sort_unstable();
        seen.dedup();
        let mut hits: Vec<(FrameId, RayHit<D>)> = seen
            .into_iter()
            .filter_map(|id| ray_cast(&self.frame(id).ok()?, origin, dir, max_time).map(|h| (id, h)))
            .collect();
        hits.sort_unstable_by(|(a, h), (b, k)| h.time.total_cmp(&k.time).then(a.cmp(b)));
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

    /// Calls `visit(end, frames)` with the frames whose boxes meet each
    /// segment of the ray in turn (`end`: the segment's last ray
    /// parameter), until it returns false or the ray ends.
    fn walk_ray(&self, origin: [f64; D], dir: [f64; D], max_time: f64, mut visit: impl FnMut(f64, &[FrameId]) -> bool) {
        let speed = dir.iter().map(|x| x * x).sum::<f64>().sqrt();
        let step = self.cell.base() / speed;
        // A ray longer in cells than the world has frames costs more walked
        // than every frame tested once: test them all.
        let frames = self.fixed.len() + self.moving.len();
        if max_time / step > frames.max(64) as f64 {
            let all: Vec<FrameId> = self.fixed.live().chain(self.moving.live()).map(|(_, m)| m.id()).collect();
            visit(max_time, &all);
            return;
        }
        let at = |s: f64| -> [f64; D] { std::array::from_fn(|k| origin[k] + s * dir[k]) };
        let mut start = 0.0;
        loop {
            let end = (start + step).min(max_time);
            let (p, q) = (at(start), at(end));
            let segment =
                Aabb { min: std::array::from_fn(|k| p[k].min(q[k])), max: std::array::from_fn(|k| p[k].max(q[k])) };
            if !visit(end, &self.query_aabb(&segment)) || end >= max_time {
                return;
            }
            start = end;
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
