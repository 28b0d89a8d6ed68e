//! The narrow phase: FMB, the exact intersection test of two frames.
//!
//! Pipeline for one pair: quick rejection on the frames' (swept) boxes →
//! canonical order of the pair (so `(a, b)` and `(b, a)` run the very same
//! arithmetic) → `B` in `A`'s local coordinates (`relative.rs`) → the
//! inequality system (`system.rs`), whose first rows reject most separated
//! pairs → a vertex witness (a vertex of one frame well inside the other
//! proves the overlap at once; for a moving pair, one at the step's start
//! and one at its end prove contact over the whole step) → Fourier–Motzkin
//! elimination (`elimination.rs`) → for [`intersect`], the exact box: side
//! by side by a tiny dual simplex (`box_lp.rs`) for moving pairs with a
//! parallelepiped, otherwise (or if the simplex gives up) from the
//! intersection's vertices (`exact_box.rs`).
//!
//! # Touching policy
//! Two frames collide when `A ∩ B` has a non-empty interior (moving: at some
//! instant of the step). Sharing a corner, an edge or a face, or meeting at a
//! single instant, is not a collision, whatever the axis or the argument
//! order. Configurations within about 1e-12 (relative to the frames' scale)
//! of touching count as touching. The queries (`penetration`, `distance`,
//! `first_contact`) take their verdict from here.
//!
//! # Thin frames
//! A pair with a thin frame ([`crate::THIN_RATIO`]) is decided and timed by
//! the separating-axis test instead of the elimination: combining a thin
//! frame's nearly parallel faces cancels the digits that decide the pair.

mod box_lp;
mod elimination;
mod exact_box;
mod relative;
mod separation;
mod spin;
mod system;

pub(crate) use spin::swept_aabb;
pub use spin::{MAX_BOX_TESTS, MAX_TESTS, Spin, SpinContact, intersect_spinning};

use std::cmp::Ordering;

use arrayvec::ArrayVec;

use crate::aabb::Aabb;
use crate::contact::ContactDetail;
use crate::frame::{Frame, FrameKind};
use elimination::{Bounds, Infeasible, Row};
use relative::Relative;
pub(crate) use separation::gap_exceeding;

/// Where and when two frames intersect.
///
/// ```
/// use fmbgrid::{Frame2, intersect};
/// let a = Frame2::from_aabb([0.0, 0.0], [2.0, 2.0])?;
/// let b = Frame2::from_aabb([1.0, 1.0], [3.0, 3.0])?;
/// let hit = intersect(&a, &b).expect("they overlap");
/// assert_eq!(hit.aabb.min, [1.0, 1.0]);
/// assert_eq!(hit.aabb.max, [2.0, 2.0]);
/// assert_eq!(hit.time, [0.0, 1.0]);
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Intersection<const D: usize> {
    /// Exact world box of `A ∩ B`; for moving frames, of the set swept by
    /// `A(t) ∩ B(t)` over the contact interval.
    pub aabb: Aabb<D>,
    /// `[t_enter, t_exit] ⊆ [0, 1]`: the first and last instants of contact
    /// within the step (`[0, 1]` when the frames do not move relative to
    /// each other).
    pub time: [f64; 2],
}

/// True when the interiors of `a` and `b` meet (at some instant of the step
/// if either moves). Symmetric; allocation-free.
///
/// ```
/// use fmbgrid::{Frame3, overlaps};
/// let unit = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let a = Frame3::cuboid([0.0; 3], unit)?;
/// let b = Frame3::tetrahedron([0.5; 3], unit)?;
/// let far = Frame3::tetrahedron([1.0, 0.0, 0.0], unit)?; // shares a face with `a`
/// assert!(overlaps(&a, &b));
/// assert!(!overlaps(&a, &far));
/// assert!(overlaps(&a, &far.with_velocity([-0.5, 0.0, 0.0])?));
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
pub fn overlaps<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> bool {
    if !a.aabb().intersects(&b.aabb()) {
        return false;
    }
    let (a, b) = canonical(a, b);
    if thin_pair(a, b) {
        return crate::sat::contact_interval(a, b).is_some();
    }
    let ab = Relative::new(a, b);
    if relative_velocity_is_zero(a, b) {
        static_decision(a, b, &ab, &mut None).is_ok()
    } else {
        // One end suffices for a yes, with the margin scaled to the
        // elimination's band at this speed (`has_vertex_deep_inside`).
        let witness = || ab.has_vertex_deep_inside(a.kind(), 0.0) || ab.has_vertex_deep_inside(a.kind(), 1.0);
        eliminate(a.kind(), &ab, true, witness).is_ok()
    }
}

/// Intersection of `a` and `b`: `None` when their interiors never meet,
/// otherwise the exact box of the intersection and the contact interval.
/// Symmetric: `intersect(a, b) == intersect(b, a)`, bit for bit.
///
/// ```
/// use fmbgrid::{Frame3, intersect};
/// let unit = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let a = Frame3::cuboid([0.0; 3], unit)?;
/// let b = Frame3::tetrahedron([0.5; 3], unit)?.with_velocity([-4.0, 0.0, 0.0])?;
/// let hit = intersect(&a, &b).unwrap();
/// assert!((hit.time[1] - 0.375).abs() < 1e-12); // b has left a by t = 1.5 / 4
/// assert_eq!(intersect(&b, &a), Some(hit));
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
pub fn intersect<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Option<Intersection<D>> {
    intersect_with(a, b, true)
}

/// [`intersect`] with the box always taken from the full vertex enumeration
/// (no fast path): the reference the fast paths are measured against.
#[doc(hidden)]
pub fn intersect_enumerated<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Option<Intersection<D>> {
    intersect_with(a, b, false)
}

/// Research statistics: true when [`intersect`]'s box of this pair comes
/// from the per-side simplex rather than the vertex enumeration.
#[doc(hidden)]
pub fn box_fast_path<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> bool {
    let (a, b) = canonical(a, b);
    let (ab, ba) = (Relative::new(a, b), Relative::new(b, a));
    !relative_velocity_is_zero(a, b) && quick_box(a, b, &ab, &ba).is_some()
}

/// Research statistics (`box-stats` feature): pivots made by the exact
/// box's simplex since the last call.
#[cfg(feature = "box-stats")]
#[doc(hidden)]
pub fn take_box_pivots() -> usize {
    box_lp::PIVOTS.swap(0, std::sync::atomic::Ordering::Relaxed)
}

/// The box by the per-side simplex (`box_lp`) of a moving pair, where it
/// is faster than the enumeration: pairs with a parallelepiped (measured in wall time
/// with `benches/box_bench.rs`: 3D moving boxes 1.46× faster; static
/// pairs and pairs of simplices slower, 3D static boxes 1.9×, 3D moving
/// tetrahedra 1.3×, though they execute fewer instructions: the simplex's
/// divisions and branches cost more time than their count says). `None`:
/// use the enumeration.
#[inline(always)]
fn quick_box<const D: usize>(a: &Frame<D>, b: &Frame<D>, ab: &Relative<D>, ba: &Relative<D>) -> Option<Aabb<D>> {
    let parallelepiped = a.kind() == FrameKind::Cuboid || b.kind() == FrameKind::Cuboid;
    if parallelepiped { box_lp::lp_box(a, b, ab, ba) } else { None }
}

#[inline(always)]
fn intersect_with<const D: usize>(a: &Frame<D>, b: &Frame<D>, fast: bool) -> Option<Intersection<D>> {
    if !a.aabb().intersects(&b.aabb()) {
        return None;
    }
    let (a, b) = canonical(a, b);
    let ab = Relative::new(a, b);
    let (thin, moving) = (thin_pair(a, b), !relative_velocity_is_zero(a, b));
    // `A` seen from `B`, made by the static decision's witness when it
    // needed it, else once the pair is known to collide (the box needs it).
    let mut ba = None;
    let time = if thin {
        crate::sat::contact_interval(a, b)?
    } else if moving {
        moving_interval(a, b, &ab, &mut ba).ok()?
    } else {
        static_decision(a, b, &ab, &mut ba).ok()?;
        [0.0, 1.0]
    };
    let ba = ba.unwrap_or_else(|| Relative::new(b, a));
    let aabb = if moving {
        // The simplex's fast path only where FMB decided (it shares FMB's
        // tolerances); a thin pair's box comes from the enumeration.
        let quick = if fast && !thin { quick_box(a, b, &ab, &ba) } else { None };
        quick.or_else(|| exact_box::swept_box(a, b, &ab, &ba))
    } else {
        exact_box::static_box(a, b, &ab, &ba).map(|bx| bx.swept(&a.velocity()))
    };
    // The vertices of an intersection with an interior cannot all be lost to
    // round-off, but if they were, the frames' common box is a safe answer.
    let aabb = aabb.or_else(|| a.aabb().intersection(&b.aabb()))?;
    Some(Intersection { aabb, time })
}

/// The contact interval of `a` and `b` within the step, `[t_enter, t_exit]`
/// as fractions of it, or `None` when their interiors never meet: exactly
/// [`intersect`]'s `time`, without the cost of the box (FMB decides, and
/// for frames moving relative to each other the elimination's last
/// variable is time). Symmetric, bit for bit.
///
/// ```
/// use fmbgrid::{Frame3, intersect, overlap_interval};
/// let unit = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let a = Frame3::cuboid([0.0; 3], unit)?;
/// let b = Frame3::tetrahedron([0.5; 3], unit)?.with_velocity([-4.0, 0.0, 0.0])?;
/// let time = overlap_interval(&a, &b).unwrap();
/// assert_eq!(Some(time), intersect(&a, &b).map(|hit| hit.time));
/// assert_eq!(overlap_interval(&b, &a), Some(time));
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
pub fn overlap_interval<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Option<[f64; 2]> {
    interval_with(a, b, true)
}

/// [`overlap_interval`] by the elimination alone, with no witness cutting
/// it short: the reference the witness is tested against.
#[doc(hidden)]
pub fn overlap_interval_eliminated<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Option<[f64; 2]> {
    interval_with(a, b, false)
}

#[inline(always)]
fn interval_with<const D: usize>(a: &Frame<D>, b: &Frame<D>, witness: bool) -> Option<[f64; 2]> {
    if !a.aabb().intersects(&b.aabb()) {
        return None;
    }
    let (a, b) = canonical(a, b);
    if thin_pair(a, b) {
        return crate::sat::contact_interval(a, b);
    }
    let ab = Relative::new(a, b);
    let moving = !relative_velocity_is_zero(a, b);
    if !witness {
        let bounds = eliminate(a.kind(), &ab, moving, || false).ok()?;
        return Some(if moving { [bounds.lo[D], bounds.hi[D]] } else { [0.0, 1.0] });
    }
    if moving {
        moving_interval(a, b, &ab, &mut None).ok()
    } else {
        static_decision(a, b, &ab, &mut None).ok()?;
        Some([0.0, 1.0])
    }
}

/// FMB's decision for a pair at rest relative to each other (canonical
/// order), with the vertex witness of either frame; `ba` caches `A` seen
/// from `B` when the witness needed it.
///
/// `A`'s vertices are tried before the system's rows, which cost more than
/// they do: about 40% of the static box pairs whose boxes overlap
/// intersect, and most of those have a vertex of `A` inside `B`. `B`'s
/// vertices need `A` seen from `B` (an inversion) and are tried after the
/// rows, which reject separated pairs first (`box_bench interval`, minus
/// mode `none`, instructions a pair: static box pairs 1,063 → 848 when
/// they intersect, 929 → 1,017 when not).
#[inline(always)]
fn static_decision<const D: usize>(
    a: &Frame<D>,
    b: &Frame<D>,
    ab: &Relative<D>,
    ba: &mut Option<Relative<D>>,
) -> Result<(), Infeasible> {
    if ab.has_vertex_inside(a.kind(), 0.0) {
        return Ok(());
    }
    let witness = || ba.get_or_insert_with(|| Relative::new(b, a)).has_vertex_inside(b.kind(), 0.0);
    eliminate(a.kind(), ab, false, witness).map(|_| ())
}

/// The exact contact interval of a pair moving relative to each other
/// (canonical order); `ba` caches `A` seen from `B` when the witness needed
/// it. Time is the last variable, so a witness may cut the elimination
/// short only when it proves the whole step: a point inside both frames at
/// its start and one at its end. Translated convex sets that meet at `t = 0`
/// and at `t = 1` meet at every instant between (the blend of the two points
/// is in both frames), so the interval is `[0, 1]`, as the elimination
/// finds it: a point inside both frames by the witness's margin (1e-9 of
/// the local units, far outside the elimination's touching band, 1e-12)
/// keeps its time bounds from moving past either end by round-off
/// (`tests/narrow/witness.rs` compares the two bit for bit).
#[inline(always)]
fn moving_interval<const D: usize>(
    a: &Frame<D>,
    b: &Frame<D>,
    ab: &Relative<D>,
    ba: &mut Option<Relative<D>>,
) -> Result<[f64; 2], Infeasible> {
    let mut inside = |t: f64| {
        ab.has_vertex_inside(a.kind(), t)
            || ba.get_or_insert_with(|| Relative::new(b, a)).has_vertex_inside(b.kind(), t)
    };
    let bounds = eliminate(a.kind(), ab, true, || inside(0.0) && inside(1.0))?;
    Ok([bounds.lo[D], bounds.hi[D]])
}

/// FM elimination of the pair's system, with time as the last variable
/// when `moving`; `witness` is tried once the initial rows are built (they
/// reject most separated pairs more cheaply). On success the bounds hold the
/// exact range of the last variable.
#[inline(always)]
fn eliminate<const D: usize>(
    a_kind: FrameKind,
    ab: &Relative<D>,
    moving: bool,
    witness: impl FnOnce() -> bool,
) -> Result<Bounds, Infeasible> {
    let () = Frame::<D>::SUPPORTED;
    let mut bounds = Bounds::UNIT;
    match (D, moving) {
        (2, false) => decide::<D, 2>(a_kind, ab, &mut bounds, witness),
        (2, true) | (_, false) => decide::<D, 3>(a_kind, ab, &mut bounds, witness),
        _ => decide::<D, 4>(a_kind, ab, &mut bounds, witness),
    }?;
    Ok(bounds)
}

/// Builds and solves the system with `V` variables, accepting early when
/// `witness` proves an overlap.
#[inline(always)]
fn decide<const D: usize, const V: usize>(
    a_kind: FrameKind,
    ab: &Relative<D>,
    bounds: &mut Bounds,
    witness: impl FnOnce() -> bool,
) -> Result<(), Infeasible> {
    let mut rows = ArrayVec::<Row, { elimination::CAP_INITIAL }>::new();
    system::build::<D, V>(a_kind, ab, bounds, &mut rows)?;
    if witness() {
        return Ok(());
    }
    elimination::solve::<V>(&rows, bounds)
}

/// True when either frame is thin ([`crate::frame::THIN_RATIO`]): the pair
/// is decided and timed by the separating-axis test, whose axes do not
/// combine the thin frame's nearly parallel faces.
#[inline(always)]
fn thin_pair<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> bool {
    a.is_thin() | b.is_thin()
}

fn relative_velocity_is_zero<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> bool {
    a.velocity() == b.velocity()
}

/// Orders a pair so both argument orders run identical arithmetic. A
/// tetrahedron goes first when the kinds differ: inverting it and keeping the
/// cuboid's unit bounds gives the smallest system (`D + 1` rows against `2D + 1`).
#[inline(always)]
fn canonical<'f, const D: usize>(a: &'f Frame<D>, b: &'f Frame<D>) -> (&'f Frame<D>, &'f Frame<D>) {
    if order(a, b) == Ordering::Greater { (b, a) } else { (a, b) }
}

/// Kind (tetrahedron first), then origin, components and velocity, number
/// by number in `total_cmp` order: a total order, decided by the first
/// origin coordinate for almost every pair.
pub(crate) fn order<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Ordering {
    let kind_rank = |f: &Frame<D>| u8::from(f.kind() == FrameKind::Cuboid);
    let first_difference = |x: &[f64], y: &[f64]| {
        x.iter().zip(y).map(|(x, y)| x.total_cmp(y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
    };
    let (ca, cb) = (a.components(), b.components());
    kind_rank(a)
        .cmp(&kind_rank(b))
        .then_with(|| first_difference(&a.origin(), &b.origin()))
        .then_with(|| first_difference(ca.as_flattened(), cb.as_flattened()))
        .then_with(|| first_difference(&a.velocity(), &b.velocity()))
}

/// The box and interval of a contact between two frames over the step
/// (moving ones carry their displacement), in the detail asked for: what
/// a world's step and [`collide`](crate::collide()) report for a pair.
#[inline(always)]
pub(crate) fn contact_of<const D: usize>(
    detail: ContactDetail,
    f: &Frame<D>,
    g: &Frame<D>,
) -> Option<(Aabb<D>, [f64; 2])> {
    match detail {
        ContactDetail::ExactBox => intersect(f, g).map(|hit| (hit.aabb, hit.time)),
        ContactDetail::Interval => {
            let time = overlap_interval(f, g)?;
            // Overlapping interiors: the swept boxes overlap.
            Some((f.aabb().intersection(&g.aabb()).unwrap_or(Aabb::EMPTY), time))
        }
        ContactDetail::Candidates => f.aabb().intersection(&g.aabb()).map(|b| (b, [0.0, 1.0])),
    }
}
