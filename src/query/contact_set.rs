//! The set where two touching frames meet: a point, a segment or a convex
//! polygon (after the feature clipping of Box2D's and Bullet's manifolds).
//!
//! Two convex frames that touch along a unit normal `n` (from `a` to `b`)
//! meet exactly where `a`'s supporting feature in `+n` (the vertex, edge or
//! face that reaches highest along `n`) meets `b`'s supporting feature in
//! `−n`. Both lie in the same plane orthogonal to `n`, so the contact set
//! is the intersection of two convex polygons of that plane, each with at
//! most four vertices (in 2D: of two segments of a line). The features are
//! projected on the plane, one is clipped by the other (Sutherland–Hodgman
//! by the edges of a polygon; the two lines' crossing or overlap when both
//! are segments), and the result is lifted back onto the plane halfway
//! between the two supporting levels.
//!
//! A vertex belongs to a supporting feature when it is within
//! [`FEATURE_TOL`] of the frame's size (its longest component) of the
//! highest (lowest) one: faces tilted by less than that count as flat
//! against each other. Each point of the set is then checked to lie on
//! both frames within that tolerance; when round-off defeats the clipping
//! (slivers whose features are ambiguous), the set falls back to one
//! common point of the frames.

use crate::aabb::Aabb;
use crate::frame::{Frame, FrameKind};
use crate::math::{cross, dot, sub};

/// Relative tolerance of a supporting feature and of the clipping: a
/// vertex within `FEATURE_TOL ·` (the frame's longest component) of the
/// supporting level belongs to the feature; a point within `FEATURE_TOL ·`
/// (the features' size) of a clipping edge's inner side is kept; every
/// point of a set lies within `FEATURE_TOL ·` (the larger frame's longest
/// component, plus the depth) of both frames.
pub const FEATURE_TOL: f64 = 1e-9;

/// Most vertices of a contact set: a quadrilateral clipped by another.
const MAX_POINTS: usize = 8;

/// The vertices of a supporting feature in plane coordinates (at most four
/// in 3D, two in 2D) and their count.
type Feature = ([[f64; 2]; 4], usize);

/// Where two touching frames meet: a point, a segment or a convex polygon
/// (its vertices in order), with its centroid and bounding box.
///
/// ```
/// use fmbgrid::{Frame3, query::first_contact};
/// // A unit cube falls flat onto a 2×2 slab: they meet on a unit square.
/// let slab = Frame3::from_aabb([0.0, 0.0, -1.0], [2.0, 2.0, 0.0])?;
/// let cube = Frame3::from_aabb([0.5, 0.5, 1.0], [1.5, 1.5, 2.0])?.with_velocity([0.0, 0.0, -2.0])?;
/// let set = first_contact(&slab, &cube).unwrap().set;
/// assert_eq!(set.points().len(), 4);
/// assert_eq!(set.centroid(), [1.0, 1.0, 0.0]);
/// assert_eq!((set.aabb().min, set.aabb().max), ([0.5, 0.5, 0.0], [1.5, 1.5, 0.0]));
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactSet<const D: usize> {
    points: [[f64; D]; MAX_POINTS],
    len: usize,
    centroid: [f64; D],
}

impl<const D: usize> ContactSet<D> {
    /// The set reduced to one point.
    pub(crate) fn point(p: [f64; D]) -> Self {
        let mut points = [[0.0; D]; MAX_POINTS];
        points[0] = p;
        ContactSet { points, len: 1, centroid: p }
    }

    /// The set's vertices: one point, the two ends of a segment, or a
    /// convex polygon's vertices in order around it (at most eight).
    ///
    /// ```
    /// use fmbgrid::{Frame2, query::first_contact};
    /// let floor = Frame2::from_aabb([0.0, -1.0], [4.0, 0.0])?;
    /// let crate_ = Frame2::from_aabb([3.0, 1.0], [5.0, 2.0])?.with_velocity([0.0, -2.0])?;
    /// let set = first_contact(&floor, &crate_).unwrap().set;
    /// // The shared stretch of edge, from x = 3 to x = 4, at y = 0:
    /// assert_eq!(set.points().len(), 2);
    /// assert!(set.points().contains(&[3.0, 0.0]) && set.points().contains(&[4.0, 0.0]));
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn points(&self) -> &[[f64; D]] {
        &self.points[..self.len]
    }

    /// The centroid: the point, the segment's middle or the polygon's
    /// centre of area. It lies in the set, hence on both frames.
    ///
    /// ```
    /// use fmbgrid::{Frame2, query::first_contact};
    /// let floor = Frame2::from_aabb([0.0, -1.0], [4.0, 0.0])?;
    /// let crate_ = Frame2::from_aabb([3.0, 1.0], [5.0, 2.0])?.with_velocity([0.0, -2.0])?;
    /// assert_eq!(first_contact(&floor, &crate_).unwrap().set.centroid(), [3.5, 0.0]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn centroid(&self) -> [f64; D] {
        self.centroid
    }

    /// The set's bounding box.
    ///
    /// ```
    /// use fmbgrid::{Frame2, query::first_contact};
    /// let floor = Frame2::from_aabb([0.0, -1.0], [4.0, 0.0])?;
    /// let crate_ = Frame2::from_aabb([3.0, 1.0], [5.0, 2.0])?.with_velocity([0.0, -2.0])?;
    /// let b = first_contact(&floor, &crate_).unwrap().set.aabb();
    /// assert_eq!((b.min, b.max), ([3.0, 0.0], [4.0, 0.0]));
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn aabb(&self) -> Aabb<D> {
        let mut b = Aabb::EMPTY;
        self.points().iter().for_each(|p| b.include(p));
        b
    }
}

/// An orthonormal basis: the normal, then one or two tangents.
struct Basis<const D: usize> {
    n: [f64; D],
    t: [[f64; D]; 2],
}

impl<const D: usize> Basis<D> {
    fn new(n: [f64; D]) -> Self {
        let mut t = [[0.0; D]; 2];
        if D == 2 {
            t[0][0] = -n[1];
            t[0][1] = n[0];
        } else {
            // The axis along which `n` is shortest is farthest from it.
            let k = (0..3).min_by(|&i, &j| n[i].abs().total_cmp(&n[j].abs())).unwrap_or(0);
            let (mut e, n3) = ([0.0; 3], std::array::from_fn(|i| n[i]));
            e[k] = 1.0;
            let u = cross(&n3, &e);
            let len = dot(&u, &u).sqrt();
            let u = u.map(|x| x / len);
            let v = cross(&n3, &u);
            t = [std::array::from_fn(|i| u[i]), std::array::from_fn(|i| v[i])];
        }
        Basis { n, t }
    }

    /// Plane coordinates of `p` (the second one is 0 in 2D).
    fn plane(&self, p: &[f64; D]) -> [f64; 2] {
        [dot(&self.t[0], p), if D == 3 { dot(&self.t[1], p) } else { 0.0 }]
    }

    /// The point at level `h` along the normal and plane coordinates `q`.
    fn lift(&self, origin: &[f64; D], h: f64, q: [f64; 2]) -> [f64; D] {
        std::array::from_fn(|k| origin[k] + h * self.n[k] + q[0] * self.t[0][k] + q[1] * self.t[1][k])
    }
}

/// The set where `a` and `b` (at rest, touching or overlapping) meet along
/// the unit normal `n` from `a` to `b`, lifted onto the plane halfway
/// between `a`'s highest and `b`'s lowest level along `n`; `None` when
/// round-off leaves the clipped features without a common point, or with
/// one farther than the tolerance from either frame.
pub(crate) fn contact_set<const D: usize>(a: &Frame<D>, b: &Frame<D>, n: &[f64; D]) -> Option<ContactSet<D>> {
    let basis = Basis::new(*n);
    let origin = a.origin();
    let (fa, ha) = feature(a, &basis, &origin, 1.0)?;
    let (fb, hb) = feature(b, &basis, &origin, -1.0)?;
    let size = extent(&fa).max(extent(&fb));
    let mut out = ([[0.0; 2]; MAX_POINTS], 0);
    if D == 2 {
        overlap_on_line(&fa, &fb, &mut out);
    } else if fa.1 >= 3 {
        clip_by_polygon(&fb, &fa, FEATURE_TOL * size, &mut out);
    } else if fb.1 >= 3 {
        clip_by_polygon(&fa, &fb, FEATURE_TOL * size, &mut out);
    } else {
        meet_segments(&fa, &fb, FEATURE_TOL, &mut out);
    }
    if out.1 == 0 {
        return None;
    }
    let level = 0.5 * (ha + hb);
    let mut set = ContactSet { points: [[0.0; D]; MAX_POINTS], len: out.1, centroid: [0.0; D] };
    for (p, q) in set.points.iter_mut().zip(&out.0[..out.1]) {
        *p = basis.lift(&origin, level, *q);
    }
    set.centroid = basis.lift(&origin, level, centroid(&out.0[..out.1]));
    let tol = FEATURE_TOL * (size_of(a).max(size_of(b)) + (ha - hb).abs());
    set.points().iter().all(|p| outside(a, p) <= tol && outside(b, p) <= tol).then_some(set)
}

/// The length of `f`'s longest component: the scale of its tolerances.
fn size_of<const D: usize>(f: &Frame<D>) -> f64 {
    f.components().iter().map(|c| dot(c, c)).fold(0.0, f64::max).sqrt()
}

/// How far `p` lies outside frame `f` (at rest): its largest signed
/// distance to a facet's plane, negative inside.
fn outside<const D: usize>(f: &Frame<D>, p: &[f64; D]) -> f64 {
    let x = f.local_coordinates(p);
    let inv = f.inv();
    let len = |row: &[f64; D]| dot(row, row).sqrt();
    let mut worst = f64::NEG_INFINITY;
    for (xi, row) in x.iter().zip(inv) {
        worst = worst.max(-xi / len(row));
        if f.kind() == FrameKind::Cuboid {
            worst = worst.max((xi - 1.0) / len(row));
        }
    }
    if f.kind() == FrameKind::Tetrahedron {
        let sum: [f64; D] = std::array::from_fn(|k| inv.iter().map(|row| row[k]).sum());
        worst = worst.max((x.iter().sum::<f64>() - 1.0) / len(&sum));
    }
    worst
}

/// The supporting feature of `f` along `sign · n` (vertices relative to
/// `origin`, in plane coordinates, a face's in order around it) and its
/// level along `n`; `None` for a frame thinner than the tolerance along
/// `n` (more vertices at the top than a face has).
fn feature<const D: usize>(f: &Frame<D>, basis: &Basis<D>, origin: &[f64; D], sign: f64) -> Option<(Feature, f64)> {
    let mut level = [0.0_f64; 8];
    let count = f.vertex_count();
    for (m, l) in level.iter_mut().enumerate().take(count) {
        *l = sign * dot(&basis.n, &sub(&f.vertex(m), origin));
    }
    let hi = level[..count].iter().fold(f64::NEG_INFINITY, |hi, &l| hi.max(l));
    let cut = hi - FEATURE_TOL * size_of(f);
    let mut out: Feature = ([[0.0; 2]; 4], 0);
    for m in (0..count).filter(|&m| level[m] >= cut) {
        if out.1 == if D == 2 { 2 } else { 4 } {
            // More than a face: a frame flatter than the tolerance along
            // the normal, whose feature is not a face.
            return None;
        }
        out.0[out.1] = basis.plane(&sub(&f.vertex(m), origin));
        out.1 += 1;
    }
    order_around(&mut out);
    Some((out, sign * hi))
}

/// Sorts a feature's vertices counter-clockwise around their mean (a
/// cuboid's face comes in the order 0, 1, 3, 2 of its vertex bits).
fn order_around(f: &mut Feature) {
    let pts = &mut f.0[..f.1];
    if pts.len() < 3 {
        return;
    }
    let c = centroid_of_points(pts);
    pts.sort_by(|p, q| (p[1] - c[1]).atan2(p[0] - c[0]).total_cmp(&(q[1] - c[1]).atan2(q[0] - c[0])));
}

/// The largest coordinate spread of a feature (the scale of the clipping
/// tolerance).
fn extent(f: &Feature) -> f64 {
    spread(&f.0[..f.1])
}

/// The largest coordinate spread of plane points.
fn spread(pts: &[[f64; 2]]) -> f64 {
    (0..2)
        .map(|k| {
            let (lo, hi) =
                pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p[k]), hi.max(p[k])));
            hi - lo
        })
        .fold(0.0, f64::max)
}

/// 2D: the overlap of the two features' intervals on the tangent line
/// (both ends, or one point when they meet at one), or their middle when
/// round-off leaves a sliver of gap.
fn overlap_on_line(fa: &Feature, fb: &Feature, out: &mut ([[f64; 2]; MAX_POINTS], usize)) {
    let span = |f: &Feature| {
        f.0[..f.1].iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p[0]), hi.max(p[0])))
    };
    let ((a_lo, a_hi), (b_lo, b_hi)) = (span(fa), span(fb));
    let (lo, hi) = (a_lo.max(b_lo), a_hi.min(b_hi));
    if lo < hi {
        push(out, [lo, 0.0]);
        push(out, [hi, 0.0]);
    } else {
        push(out, [0.5 * (lo + hi), 0.0]);
    }
}

/// Sutherland–Hodgman: the part of `subject` (a point, a segment or a
/// polygon) on the inner side, within `tol`, of every edge of the convex
/// counter-clockwise polygon `clipper`.
fn clip_by_polygon(subject: &Feature, clipper: &Feature, tol: f64, out: &mut ([[f64; 2]; MAX_POINTS], usize)) {
    let mut cur = ([[0.0; 2]; MAX_POINTS], 0);
    cur.0[..subject.1].copy_from_slice(&subject.0[..subject.1]);
    cur.1 = subject.1;
    let c = &clipper.0[..clipper.1];
    for (i, p) in c.iter().enumerate() {
        let q = c[(i + 1) % c.len()];
        let e = [q[0] - p[0], q[1] - p[1]];
        let len = (e[0] * e[0] + e[1] * e[1]).sqrt();
        if len <= tol {
            // Two vertices in one place: no edge to clip by.
            continue;
        }
        let side = |x: &[f64; 2]| (e[0] * (x[1] - p[1]) - e[1] * (x[0] - p[0])) / len;
        cur = clip_half_plane(&cur, side, tol);
        if cur.1 == 0 {
            break;
        }
    }
    // A point or a segment, walked as a closed polyline, comes back with
    // repeated vertices (a crossing found from both sides, an ulp apart).
    let same = |p: &[f64; 2], q: &[f64; 2]| (p[0] - q[0]).abs().max((p[1] - q[1]).abs()) <= tol;
    for p in &cur.0[..cur.1] {
        if !out.0[..out.1].iter().any(|q| same(p, q)) {
            push(out, *p);
        }
    }
}

/// One Sutherland–Hodgman pass: the points of the closed polyline `poly`
/// where `side ≥ −tol`, with the crossings (`side = 0`) of the edges that
/// run from beyond `tol` on one side to beyond it on the other. A point
/// within `tol` of the line stays where it is: the crossings of a line
/// moved by `tol` would put points `tol` outside.
fn clip_half_plane(
    poly: &([[f64; 2]; MAX_POINTS], usize),
    side: impl Fn(&[f64; 2]) -> f64,
    tol: f64,
) -> ([[f64; 2]; MAX_POINTS], usize) {
    let mut out = ([[0.0; 2]; MAX_POINTS], 0);
    let pts = &poly.0[..poly.1];
    for (i, p) in pts.iter().enumerate() {
        let q = pts[(i + 1) % pts.len()];
        let (sp, sq) = (side(p), side(&q));
        if sp >= -tol {
            push(&mut out, *p);
        }
        if (sp > tol && sq < -tol) || (sp < -tol && sq > tol) {
            let s = sp / (sp - sq);
            push(&mut out, [p[0] + s * (q[0] - p[0]), p[1] + s * (q[1] - p[1])]);
        }
    }
    out
}

/// 3D, both features points or segments: a point feature is the set; two
/// crossing segments meet at their lines' crossing; parallel ones along
/// the overlap of their spans (or its middle, when round-off leaves a gap).
fn meet_segments(fa: &Feature, fb: &Feature, tol: f64, out: &mut ([[f64; 2]; MAX_POINTS], usize)) {
    let (p, q) = (&fa.0, &fb.0);
    match (fa.1, fb.1) {
        (1, 1) => push(out, [0.5 * (p[0][0] + q[0][0]), 0.5 * (p[0][1] + q[0][1])]),
        (1, _) => push(out, p[0]),
        (_, 1) => push(out, q[0]),
        _ => {
            let d = [p[1][0] - p[0][0], p[1][1] - p[0][1]];
            let e = [q[1][0] - q[0][0], q[1][1] - q[0][1]];
            let den = d[0] * e[1] - d[1] * e[0];
            let (dd, ee) = (d[0] * d[0] + d[1] * d[1], e[0] * e[0] + e[1] * e[1]);
            if den * den > tol * tol * dd * ee {
                let w = [q[0][0] - p[0][0], q[0][1] - p[0][1]];
                let s = ((w[0] * e[1] - w[1] * e[0]) / den).clamp(0.0, 1.0);
                push(out, [p[0][0] + s * d[0], p[0][1] + s * d[1]]);
            } else {
                // Parallel: project both on `d`.
                let at = |x: &[f64; 2]| ((x[0] - p[0][0]) * d[0] + (x[1] - p[0][1]) * d[1]) / dd;
                let (b0, b1) = (at(&q[0]), at(&q[1]));
                let (lo, hi) = (b0.min(b1).max(0.0), b0.max(b1).min(1.0));
                let point = |s: f64| [p[0][0] + s * d[0], p[0][1] + s * d[1]];
                if lo < hi {
                    push(out, point(lo));
                    push(out, point(hi));
                } else {
                    push(out, point(0.5 * (lo + hi)));
                }
            }
        }
    }
}

fn push(out: &mut ([[f64; 2]; MAX_POINTS], usize), p: [f64; 2]) {
    // Clipping a quadrilateral by four edges yields at most eight points.
    if out.1 < MAX_POINTS {
        out.0[out.1] = p;
        out.1 += 1;
    }
}

fn centroid_of_points(pts: &[[f64; 2]]) -> [f64; 2] {
    let n = pts.len() as f64;
    [pts.iter().map(|p| p[0]).sum::<f64>() / n, pts.iter().map(|p| p[1]).sum::<f64>() / n]
}

/// The centre of area of a convex polygon given in order (the mean of its
/// points when it has no area: a point or a segment).
fn centroid(pts: &[[f64; 2]]) -> [f64; 2] {
    let mean = centroid_of_points(pts);
    if pts.len() < 3 {
        return mean;
    }
    let (mut area, mut c) = (0.0, [0.0; 2]);
    for (i, p) in pts.iter().enumerate() {
        let (p, q) = ([p[0] - mean[0], p[1] - mean[1]], pts[(i + 1) % pts.len()]);
        let q = [q[0] - mean[0], q[1] - mean[1]];
        let w = p[0] * q[1] - p[1] * q[0];
        area += w;
        c = [c[0] + w * (p[0] + q[0]), c[1] + w * (p[1] + q[1])];
    }
    if area.abs() <= f64::EPSILON * spread(pts).powi(2) {
        return mean;
    }
    [mean[0] + c[0] / (3.0 * area), mean[1] + c[1] / (3.0 * area)]
}
