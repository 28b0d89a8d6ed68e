//! Euclidean distance between two frames, with the closest points: GJK
//! (Gilbert–Johnson–Keerthi) on the frames' support functions.
//!
//! The distance between `A` and `B` is the distance from the origin to
//! their Minkowski difference `A − B`. GJK walks a simplex of at most
//! `D + 1` points of `A − B` (each the difference of a point of `A` and a
//! point of `B`, kept to rebuild the witnesses) towards the origin: the
//! closest point `v` of the simplex to the origin (Johnson's regions, after
//! Ericson's *Real-Time Collision Detection* §5.1), then the support point
//! `w` of `A − B` in direction `−v`. For polytopes the walk ends exactly,
//! once `w` brings nothing new (`|v|² − v · w` within round-off of `|v|²`,
//! or a step that would not shorten `v`: the usual safeguard, as in van den
//! Bergen's GJK, against cycling on nearly flat simplices):
//! `v` is then the closest point of `A − B`, and the same barycentric
//! weights applied to the simplex's points of `A` and of `B` give the
//! witnesses. A frame's support point is one of its vertices, chosen by the
//! signs of `cᵢ · n` in `D` dot products: no vertex list is built.

use std::cmp::Ordering;

use crate::frame::{Frame, FrameKind};
use crate::math::{add_scaled, dot, sub};

/// Stop when a support point can shorten `|v|` by less than this share of
/// it, or by less than `ABS_TOL` of the frames' scale: below that, round-off
/// in the support points decides.
const REL_TOL: f64 = 1e-12;
const ABS_TOL: f64 = 1e-13;

/// Distances below this share of the frames' scale count as touching.
const TOUCH: f64 = 1e-12;

/// Below this share of the frames' scale, a distance is checked against
/// the narrow phase's verdict: GJK's round-off can leave a gap between
/// frames that interpenetrate by less (measured up to 3e-9 of the scale on
/// thin frames, `tests/narrow/thin_frames.rs`).
const NEAR: f64 = 1e-6;

/// Iterations allowed; polytopes of 4 to 8 vertices need far fewer.
const MAX_ITERATIONS: usize = 64;

/// The distance between two frames and a closest pair of points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Distance<const D: usize> {
    /// Euclidean distance; `0` when the frames touch or overlap.
    pub distance: f64,
    /// A point of `a` closest to `b` (when they overlap: a point of both,
    /// within round-off).
    pub on_a: [f64; D],
    /// A point of `b` closest to `a` (when they overlap: `on_a` within
    /// round-off).
    pub on_b: [f64; D],
}

/// The Euclidean distance between frames `a` and `b` at the start of the
/// step (their velocities are ignored), with a closest point on each.
/// Frames that touch or overlap (within about `1e-12` of their scale) are
/// at distance `0`, and the witnesses are then a point common to the two
/// frames, each taken as a convex combination of its own frame's vertices
/// (they agree within round-off). `distance(b, a)` gives the same distance
/// with the witnesses swapped, bit for bit.
///
/// ```
/// use fmbgrid::{Frame3, query::distance};
/// let a = Frame3::from_aabb([0.0; 3], [1.0; 3])?;
/// let b = Frame3::from_aabb([4.0, 0.5, 0.5], [5.0, 2.0, 2.0])?;
/// let d = distance(&a, &b);
/// assert!((d.distance - 3.0).abs() < 1e-12);
/// assert!((d.on_a[0] - 1.0).abs() < 1e-12 && (d.on_b[0] - 4.0).abs() < 1e-12);
/// let near = Frame3::from_aabb([0.5; 3], [2.0; 3])?;
/// assert_eq!(distance(&a, &near).distance, 0.0);
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
pub fn distance<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Distance<D> {
    let () = Frame::<D>::SUPPORTED;
    if crate::narrow::order(a, b) == Ordering::Greater {
        let d = gjk(b, a);
        return Distance { distance: d.distance, on_a: d.on_b, on_b: d.on_a };
    }
    gjk(a, b)
}

/// A point of `A − B` and the points of `A` and `B` it is the difference of.
#[derive(Clone, Copy, Debug)]
struct Point<const D: usize> {
    w: [f64; D],
    a: [f64; D],
    b: [f64; D],
}

impl<const D: usize> Point<D> {
    const ZERO: Self = Point { w: [0.0; D], a: [0.0; D], b: [0.0; D] };
}

/// The simplex in use, `pts[..n]`, and the weights of its point closest to
/// the origin.
#[derive(Clone, Copy, Debug)]
struct Simplex<const D: usize> {
    pts: [Point<D>; 4],
    weight: [f64; 4],
    n: usize,
}

/// A face of the simplex holding its closest point: which of its points,
/// with which weights. Computed before the simplex is changed, so that a
/// step that brings no progress can be dropped.
#[derive(Clone, Copy, Debug)]
struct Face {
    idx: [usize; 4],
    weight: [f64; 4],
    n: usize,
}

impl Face {
    fn one(i: usize) -> Face {
        Face { idx: [i, 0, 0, 0], weight: [1.0, 0.0, 0.0, 0.0], n: 1 }
    }

    /// Points `i` and `j`, at `t` from `i` to `j`.
    fn two(i: usize, j: usize, t: f64) -> Face {
        Face { idx: [i, j, 0, 0], weight: [1.0 - t, t, 0.0, 0.0], n: 2 }
    }
}

impl<const D: usize> Simplex<D> {
    fn w(&self, i: usize) -> &[f64; D] {
        &self.pts[i].w
    }

    /// The point of `A − B` a face's weights make.
    fn point(&self, f: &Face) -> [f64; D] {
        (0..f.n).fold([0.0; D], |v, k| add_scaled(&v, f.weight[k], self.w(f.idx[k])))
    }

    /// Keeps only the face's points, with its weights.
    fn keep(&mut self, f: &Face) {
        let old = self.pts;
        for k in 0..f.n {
            self.pts[k] = old[f.idx[k]];
        }
        self.weight = f.weight;
        self.n = f.n;
    }
}

fn gjk<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Distance<D> {
    // Relative to `a`'s origin: the arithmetic does not depend on where the
    // pair sits in the world.
    let base = a.origin();
    let scale = extent(a).max(extent(b)) + dot(&sub(&b.origin(), &base), &sub(&b.origin(), &base)).sqrt();
    // Each frame's kind, origin and components, read once.
    let (fa, fb) = (Hull::of(a, &base), Hull::of(b, &base));
    let point = |n: &[f64; D]| {
        let (pa, pb) = (fa.support(&n.map(|x| -x)), fb.support(n));
        Point { w: sub(&pa, &pb), a: pa, b: pb }
    };
    // From the centres' offset: on most pairs already near the answer.
    let first = point(&sub(&centre(a), &centre(b)));
    let mut s = Simplex { pts: [Point::ZERO; 4], weight: [1.0, 0.0, 0.0, 0.0], n: 1 };
    s.pts[0] = first;
    let mut v = first.w;
    for _ in 0..MAX_ITERATIONS {
        let vv = dot(&v, &v);
        if vv <= (TOUCH * scale) * (TOUCH * scale) {
            return touching(&s, &base);
        }
        let p = point(&v);
        // No support point beyond the closest one: `v` is exact.
        let repeated = s.pts[..s.n].iter().any(|q| q.a == p.a && q.b == p.b);
        if repeated || vv - dot(&v, &p.w) <= REL_TOL * vv + vv.sqrt() * ABS_TOL * scale {
            break;
        }
        s.pts[s.n] = p;
        s.n += 1;
        let face = closest(&s);
        if face.n == D + 1 {
            // The origin is inside the simplex: the frames overlap.
            s.keep(&face);
            return touching(&s, &base);
        }
        let next = s.point(&face);
        if dot(&next, &next) >= vv {
            // No progress: round-off in a nearly flat simplex. The last
            // `v` is within round-off of the closest point.
            s.n -= 1;
            break;
        }
        s.keep(&face);
        v = next;
    }
    let (on_a, on_b) = witnesses(&s, &base);
    let distance = dot(&v, &v).sqrt();
    // One touching policy: within round-off of touching, a pair the narrow
    // phase calls overlapping is at distance zero.
    if distance <= NEAR * scale && crate::overlaps(&a.at(0.0), &b.at(0.0)) {
        return Distance { distance: 0.0, on_a, on_b };
    }
    Distance { distance, on_a, on_b }
}

/// Distance zero, with the simplex's combinations as the common point.
fn touching<const D: usize>(s: &Simplex<D>, base: &[f64; D]) -> Distance<D> {
    let (on_a, on_b) = witnesses(s, base);
    Distance { distance: 0.0, on_a, on_b }
}

/// The barycentric combinations of the simplex's points of `A` and `B`,
/// back in world coordinates. The weights are clamped to be non-negative
/// and renormalised first: on a nearly flat simplex round-off can push one
/// below zero, and a convex combination of a frame's vertices stays in it.
fn witnesses<const D: usize>(s: &Simplex<D>, base: &[f64; D]) -> ([f64; D], [f64; D]) {
    let total: f64 = s.weight[..s.n].iter().map(|l| l.max(0.0)).sum();
    let (mut pa, mut pb) = (*base, *base);
    for (p, l) in s.pts[..s.n].iter().zip(&s.weight) {
        let l = if total > 0.0 { l.max(0.0) / total } else { 1.0 / s.n as f64 };
        pa = add_scaled(&pa, l, &p.a);
        pb = add_scaled(&pb, l, &p.b);
    }
    (pa, pb)
}

/// A frame as GJK reads it: kind, origin relative to the pair's base
/// point, components.
struct Hull<const D: usize> {
    kind: FrameKind,
    o: [f64; D],
    c: [[f64; D]; D],
}

impl<const D: usize> Hull<D> {
    fn of(f: &Frame<D>, base: &[f64; D]) -> Self {
        Hull { kind: f.kind(), o: sub(&f.origin(), base), c: f.components() }
    }

    /// The vertex farthest along `n`.
    #[inline(always)]
    fn support(&self, n: &[f64; D]) -> [f64; D] {
        let (o, c) = (&self.o, &self.c);
        match self.kind {
            FrameKind::Cuboid => c.iter().fold(*o, |p, ci| if dot(ci, n) > 0.0 { add_scaled(&p, 1.0, ci) } else { p }),
            FrameKind::Tetrahedron => {
                let (mut best, mut top) = (D, 0.0);
                for (i, ci) in c.iter().enumerate() {
                    let x = dot(ci, n);
                    if x > top {
                        (best, top) = (i, x);
                    }
                }
                if best < D { add_scaled(o, 1.0, &c[best]) } else { *o }
            }
        }
    }
}

/// The frame's centroid.
fn centre<const D: usize>(f: &Frame<D>) -> [f64; D] {
    let share = match f.kind() {
        FrameKind::Cuboid => 0.5,
        FrameKind::Tetrahedron => 1.0 / (D as f64 + 1.0),
    };
    f.components().iter().fold(f.origin(), |p, c| add_scaled(&p, share, c))
}

/// The sum of the component lengths: the frame's size.
fn extent<const D: usize>(f: &Frame<D>) -> f64 {
    f.components().iter().map(|c| dot(c, c).sqrt()).sum()
}

/// The face of the simplex (its last point newest) holding its closest
/// point to the origin. The whole simplex (`D + 1` points) only when it
/// holds the origin.
fn closest<const D: usize>(s: &Simplex<D>) -> Face {
    match s.n {
        2 => segment(s, 0, 1),
        3 => triangle(s, 0, 1, 2),
        _ => tetrahedron(s),
    }
}

fn segment<const D: usize>(s: &Simplex<D>, i: usize, j: usize) -> Face {
    let (a, b) = (s.w(i), s.w(j));
    let ab = sub(b, a);
    let (num, den) = (-dot(a, &ab), dot(&ab, &ab));
    if num <= 0.0 || den == 0.0 {
        Face::one(i)
    } else if num >= den {
        Face::one(j)
    } else {
        Face::two(i, j, num / den)
    }
}

/// Ericson's `ClosestPtPointTriangle` with the origin as the point.
fn triangle<const D: usize>(s: &Simplex<D>, i: usize, j: usize, k: usize) -> Face {
    let (a, b, c) = (s.w(i), s.w(j), s.w(k));
    let (ab, ac) = (sub(b, a), sub(c, a));
    let (d1, d2) = (-dot(&ab, a), -dot(&ac, a));
    if d1 <= 0.0 && d2 <= 0.0 {
        return Face::one(i);
    }
    let (d3, d4) = (-dot(&ab, b), -dot(&ac, b));
    if d3 >= 0.0 && d4 <= d3 {
        return Face::one(j);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return Face::two(i, j, d1 / (d1 - d3));
    }
    let (d5, d6) = (-dot(&ab, c), -dot(&ac, c));
    if d6 >= 0.0 && d5 <= d6 {
        return Face::one(k);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return Face::two(i, k, d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        return Face::two(j, k, (d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let sum = va + vb + vc;
    if sum <= 0.0 || sum.is_nan() {
        // Degenerate (collinear) triangle: the closest of its edges.
        return [segment(s, i, j), segment(s, i, k), segment(s, j, k)]
            .into_iter()
            .min_by(|f, g| norm2(s, f).total_cmp(&norm2(s, g)))
            .unwrap_or(Face::one(i));
    }
    if D == 2 {
        // The origin is inside: signed areas give its weights with the
        // triangle's own conditioning (the dot products above square it).
        let area =
            |p: &[f64; D], q: &[f64; D], r: &[f64; D]| (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]);
        let (o, total) = ([0.0; D], area(a, b, c));
        if total != 0.0 {
            let (la, lb) = (area(&o, b, c) / total, area(a, &o, c) / total);
            return Face { idx: [i, j, k, 0], weight: [la, lb, 1.0 - la - lb, 0.0], n: 3 };
        }
    }
    let (v, w) = (vb / sum, vc / sum);
    Face { idx: [i, j, k, 0], weight: [1.0 - v - w, v, w, 0.0], n: 3 }
}

/// `|closest point|²` of a face.
fn norm2<const D: usize>(s: &Simplex<D>, f: &Face) -> f64 {
    let v = s.point(f);
    dot(&v, &v)
}

/// Ericson's `ClosestPtPointTetrahedron` with the origin as the point (3D
/// only): the closest of the faces the origin lies outside of, or the
/// whole tetrahedron with the origin's barycentric weights.
fn tetrahedron<const D: usize>(s: &Simplex<D>) -> Face {
    let faces = [(0, 1, 2, 3), (0, 2, 3, 1), (0, 3, 1, 2), (1, 3, 2, 0)];
    let mut best: Option<(Face, f64)> = None;
    for (i, j, k, other) in faces {
        if outside(s.w(i), s.w(j), s.w(k), s.w(other)) {
            let f = triangle(s, i, j, k);
            let d = norm2(s, &f);
            if best.is_none_or(|(_, e)| d < e) {
                best = Some((f, d));
            }
        }
    }
    if let Some((f, _)) = best {
        return f;
    }
    // Inside: weights from the signed volumes, unless the tetrahedron is
    // flat (the new point in the plane of the others), where they are
    // noise: then the closest of its faces.
    let (a, b, c, d) = (s.w(0), s.w(1), s.w(2), s.w(3));
    let vol = |p: &[f64; D], q: &[f64; D], r: &[f64; D], t: &[f64; D]| triple(&sub(q, p), &sub(r, p), &sub(t, p));
    let total = vol(a, b, c, d);
    let o = [0.0; D];
    let l = [vol(&o, b, c, d), vol(a, &o, c, d), vol(a, b, &o, d), vol(a, b, c, &o)];
    let size = [b, c, d].iter().map(|q| dot(&sub(q, a), &sub(q, a)).sqrt()).product::<f64>();
    if total.abs() <= 1e-9 * size || l.iter().any(|li| li / total < -1e-9) {
        return faces
            .into_iter()
            .map(|(i, j, k, _)| triangle(s, i, j, k))
            .min_by(|f, g| norm2(s, f).total_cmp(&norm2(s, g)))
            .unwrap_or(Face::one(0));
    }
    Face { idx: [0, 1, 2, 3], weight: l.map(|li| li / total), n: 4 }
}

/// True when the origin and `other` lie on opposite sides of the plane of
/// `p, q, r` (or `other` is on it: a flat tetrahedron tests every face).
fn outside<const D: usize>(p: &[f64; D], q: &[f64; D], r: &[f64; D], other: &[f64; D]) -> bool {
    let (pq, pr) = (sub(q, p), sub(r, p));
    let origin = triple(&pq, &pr, &p.map(|x| -x));
    let side = triple(&pq, &pr, &sub(other, p));
    origin * side <= 0.0 && !(origin == 0.0 && side != 0.0)
}

/// `x · (y × z)` of 3D vectors (zero in 2D, where no tetrahedron forms).
fn triple<const D: usize>(x: &[f64; D], y: &[f64; D], z: &[f64; D]) -> f64 {
    if D != 3 {
        return 0.0;
    }
    x[0] * (y[1] * z[2] - y[2] * z[1]) + x[1] * (y[2] * z[0] - y[0] * z[2]) + x[2] * (y[0] * z[1] - y[1] * z[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Frame2, Frame3, overlaps};

    #[test]
    fn boxes_apart_along_an_axis_and_at_a_corner() {
        let a = Frame2::from_aabb([0.0, 0.0], [1.0, 1.0]).expect("a box");
        let b = Frame2::from_aabb([2.0, 3.0], [3.0, 4.0]).expect("a box");
        let d = distance(&a, &b);
        assert!((d.distance - 5.0_f64.sqrt()).abs() < 1e-12, "{d:?}");
        assert_eq!((d.on_a, d.on_b), ([1.0, 1.0], [2.0, 3.0]));
        let e = distance(&b, &a);
        assert_eq!((e.distance, e.on_a, e.on_b), (d.distance, d.on_b, d.on_a));
    }

    #[test]
    fn overlapping_frames_share_the_witness() {
        let a = Frame3::from_aabb([0.0; 3], [2.0; 3]).expect("a box");
        let b = Frame3::tetrahedron([1.0; 3], [[3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0]]).expect("a simplex");
        assert!(overlaps(&a, &b));
        let d = distance(&a, &b);
        assert_eq!(d.distance, 0.0);
        assert!(dot(&sub(&d.on_a, &d.on_b), &sub(&d.on_a, &d.on_b)) < 1e-24);
        assert!(a.contains_point(&d.on_a, 0.0) && b.contains_point(&d.on_b, 0.0), "{d:?}");
    }
}
