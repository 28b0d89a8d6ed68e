//! Where and how two moving frames first touch: the instant, the contact
//! normal and a contact point (after Eberly's "last separating axis").
//!
//! FMB gives the exact first instant `t` at which the interiors meet
//! ([`overlap_interval`]). Along each candidate
//! axis (`axes.rs`: the Minkowski difference's facet normals, the same for
//! every instant since frames only translate) the projections start to
//! overlap at some instant; the interiors meet once all of them do, so `t`
//! is the latest of those instants, and the axis that attains it, the last
//! one to stop separating the frames, is the normal of the contact. At `t`
//! the frames touch, and clipping their supporting features along the
//! normal (`contact_set.rs`) gives the whole set where they meet, whose
//! centroid is the contact point. Frames that already overlap at the start of the step
//! report instant 0 with their penetration (`penetration.rs`).

use std::cmp::Ordering;

use super::axes::{each_axis, range};
use super::contact_set::{ContactSet, contact_set};
use super::{distance, penetration};
use crate::frame::Frame;
use crate::math::{dot, sub};
use crate::narrow::overlap_interval;

/// How two frames come into contact during the step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FirstContact<const D: usize> {
    /// The first instant at which the interiors meet, as a fraction of the
    /// step (`0` when they overlap from its start).
    pub time: f64,
    /// Unit contact normal from `a` towards `b` at `time`: the direction
    /// `b` approached `a` along (for frames overlapping at the start, the
    /// penetration normal).
    pub normal: [f64; D],
    /// A point where the frames touch at `time`: the centroid of
    /// [`set`](Self::set) (when they overlap at the start, a point of
    /// both).
    pub point: [f64; D],
    /// Penetration depth at `time`: `0` for a contact that begins during
    /// the step, the depth of the overlap for frames overlapping at its
    /// start.
    pub depth: f64,
    /// Where the frames touch at `time`: a point, a segment or a polygon
    /// ([`ContactSet`]). For frames overlapping at the start, the deepest
    /// features' overlap along the normal (a contact manifold), placed
    /// halfway through the depth.
    pub set: ContactSet<D>,
}

/// When, where and along which normal frames `a` and `b` (each translating
/// by its velocity over the step, `t ∈ [0, 1]`) first touch, or `None` when
/// their interiors never meet during the step (touching is not meeting:
/// [`crate::overlaps`]'s policy). `first_contact(b, a)` gives the same
/// instant, point and depth and the opposite normal, bit for bit.
///
/// When several axes close at the same instant (a face meeting a face
/// edge-on, say), the normal is one of them.
///
/// ```
/// use fmbgrid::{Frame2, query::first_contact};
/// let wall = Frame2::from_aabb([0.0, 0.0], [1.0, 4.0])?;
/// let ball = Frame2::from_aabb([3.0, 1.0], [4.0, 2.0])?.with_velocity([-4.0, 0.0])?;
/// let c = first_contact(&wall, &ball).unwrap();
/// assert!((c.time - 0.5).abs() < 1e-12); // 2 units at 4 per step
/// assert_eq!(c.normal, [1.0, 0.0]); // the ball came from +x
/// assert!((c.point[0] - 1.0).abs() < 1e-12 && (1.0..=2.0).contains(&c.point[1]));
/// assert_eq!(c.depth, 0.0);
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
pub fn first_contact<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Option<FirstContact<D>> {
    let () = Frame::<D>::SUPPORTED;
    if crate::narrow::order(a, b) == Ordering::Greater {
        let c = first_contact(b, a)?;
        return Some(FirstContact { normal: c.normal.map(|x| -x), ..c });
    }
    let time = overlap_interval(a, b)?[0];
    let (fa, fb) = (a.at(time), b.at(time));
    if time == 0.0
        && let Some(p) = penetration(&fa, &fb)
    {
        let point = common_point(&fa, &fb);
        let set = contact_set(&fa, &fb, &p.normal).unwrap_or(ContactSet::point(point));
        return Some(FirstContact { time, normal: p.normal, point, depth: p.depth, set });
    }
    let normal = last_axis(a, b);
    let set = contact_set(&fa, &fb, &normal).unwrap_or_else(|| ContactSet::point(common_point(&fa, &fb)));
    Some(FirstContact { time, normal, point: set.centroid(), depth: 0.0, set })
}

/// The middle of GJK's closest points: a point of both frames when they
/// touch or overlap.
fn common_point<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> [f64; D] {
    let d = distance(a, b);
    std::array::from_fn(|k| 0.5 * (d.on_a[k] + d.on_b[k]))
}

/// The unit axis, oriented from `a` to `b`, whose projections are the last
/// to start overlapping.
fn last_axis<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> [f64; D] {
    let (ca, cb) = (a.components(), b.components());
    let (d, w) = (sub(&b.origin(), &a.origin()), sub(&b.velocity(), &a.velocity()));
    let (mut latest, mut normal) = (f64::NEG_INFINITY, [0.0; D]);
    each_axis(a, b, |n| {
        let len = dot(n, n).sqrt();
        if len == 0.0 {
            return true;
        }
        let ([a_lo, a_hi], [b_lo, b_hi]) = (range(a.kind(), &ca, n, 0.0), range(b.kind(), &cb, n, dot(n, &d)));
        let s = dot(n, &w);
        // b above a until `b_lo + s t` comes down to `a_hi`; below a until
        // `b_hi + s t` comes up to `a_lo`. Only the side b approaches from
        // can hold the entry.
        let (entry, sign) = if s < 0.0 {
            ((a_hi - b_lo) / s, 1.0)
        } else if s > 0.0 {
            ((a_lo - b_hi) / s, -1.0)
        } else {
            (f64::NEG_INFINITY, if b_lo + b_hi >= a_lo + a_hi { 1.0 } else { -1.0 })
        };
        if entry > latest || normal == [0.0; D] {
            latest = entry;
            normal = n.map(|x| sign * x / len);
        }
        true
    });
    normal
}
