//! The contact's interval: the pieces of the step where two turning
//! frames' enclosures meet, halved until within the tolerance, from the
//! start to the first contact and from the end to the last.

use arrayvec::ArrayVec;

use super::super::{intersect, overlap_interval, overlaps};
use super::enclosure::{Mover, projection, swept_box};
use crate::aabb::Aabb;
use crate::frame::FrameKind;
use crate::math::{dot, norm, sub};

/// Most FMB tests [`intersect_spinning`](super::intersect_spinning) spends searching for the ends of
/// a pair's contact, half of them at most for its start (then at most 68
/// more: the pieces still pending and the step's ends; the box has its
/// own bound, [`MAX_BOX_TESTS`](super::MAX_BOX_TESTS)).
pub const MAX_TESTS: usize = 512;

/// Deepest halving of the step (sub-intervals of `2⁻³⁰` of it).
pub(super) const MAX_DEPTH: u32 = 30;

/// Pieces of the step in which the interiors may meet: where, the exact
/// box of the enclosures' intersection there (empty when only the
/// interval was asked for), and whether the enclosures are within the
/// tolerance of the true frames.
#[derive(Clone, Copy)]
pub(super) struct Piece<const D: usize> {
    pub(super) time: [f64; 2],
    pub(super) aabb: Aabb<D>,
    pub(super) fine: bool,
}

/// Two moving frames, the half-spaces that bound them ([`Plane`]), the
/// tolerance and the work spent.
pub(super) struct Pair<'a, const D: usize> {
    pub(super) a: Mover<'a, D>,
    pub(super) b: Mover<'a, D>,
    pub(super) planes: ArrayVec<Plane<D>, 12>,
    /// True when `b` comes first in the frames' own order
    /// ([`Pair::new`]).
    pub(super) b_first: bool,
    pub(super) tolerance: f64,
    pub(super) tests: usize,
}

impl<'a, const D: usize> Pair<'a, D> {
    /// The pair, its half-spaces not listed yet ([`Pair::list_planes`]:
    /// only a box's refinement needs them, and most pairs are decided
    /// before).
    pub(super) fn new(a: Mover<'a, D>, b: Mover<'a, D>, tolerance: f64) -> Self {
        Pair { a, b, planes: ArrayVec::new(), b_first: false, tolerance, tests: 0 }
    }

    /// Lists the half-spaces (once), frame by frame in an order of the
    /// frames themselves (their numbers compared in turn), not of the
    /// arguments: the lids (`Pair::lid`) then round the same way
    /// whichever frame is `a`, and so do the boxes (a world and a brute
    /// force calling the pair in either order agree bit for bit).
    pub(super) fn list_planes(&mut self) {
        if !self.planes.is_empty() {
            return;
        }
        let numbers = |m: &Mover<'_, D>| {
            let f = m.frame;
            let c = f.components();
            let kind = f64::from(u8::from(f.kind() == FrameKind::Cuboid));
            std::iter::once(kind)
                .chain(f.origin())
                .chain(c.into_iter().flatten())
                .chain(f.velocity())
                .chain(m.spin.pivot)
                .chain(m.spin.rate)
        };
        let order = numbers(&self.b).zip(numbers(&self.a)).map(|(x, y)| x.total_cmp(&y)).find(|o| o.is_ne());
        self.b_first = order.is_some_and(|o| o.is_lt());
        let (a, b) = (&self.a, &self.b);
        self.planes = if self.b_first {
            Plane::of(b, true).chain(Plane::of(a, false)).collect()
        } else {
            Plane::of(a, false).chain(Plane::of(b, true)).collect()
        };
    }
}

impl<const D: usize> Pair<'_, D> {
    /// The contact's first piece: the step's start when the true frames
    /// already overlap there (exactly an end of the contact: no search),
    /// else the earliest piece found within half the search's work bound
    /// (the other half is the last piece's, however long this search is).
    pub(super) fn start(&mut self) -> Option<Piece<D>> {
        let at_start = if self.overlap_at(0.0) { self.end_piece(false) } else { None };
        at_start.or_else(|| self.first_piece(0.0, 1.0, false, MAX_TESTS / 2))
    }

    /// The contact's last piece, after `first` (`first` itself when the
    /// enclosures never meet after it).
    pub(super) fn end(&mut self, first: &Piece<D>) -> Piece<D> {
        let at_end = if self.overlap_at(1.0) { self.end_piece(true) } else { None };
        at_end.or_else(|| self.first_piece(first.time[1], 1.0, true, MAX_TESTS)).unwrap_or(*first)
    }

    /// True when the true frames' interiors meet at instant `t` (FMB on
    /// the two frames at rest where they are then).
    pub(super) fn overlap_at(&mut self, t: f64) -> bool {
        let (Some(a), Some(b)) = (self.a.pose_at(t), self.b.pose_at(t)) else { return false };
        self.tests += 1;
        overlaps(&a, &b)
    }

    /// The piece at the start (or, `at_end`, the end) of the step that is
    /// the longest power-of-two fraction of it refined to the tolerance:
    /// the contact's piece there when the frames overlap at that end.
    pub(super) fn end_piece(&mut self, at_end: bool) -> Option<Piece<D>> {
        let span = (0..=MAX_DEPTH).map(|k| 0.5_f64.powi(k as i32)).find(|&s| self.error(s) <= self.tolerance)?;
        if at_end { self.piece(1.0 - span, 1.0, true) } else { self.piece(0.0, span, true) }
    }

    /// The enclosures on `[t0, t1]` as one piece, if they meet; with
    /// `with_box`, its box too (the search for an end needs only the
    /// interval: FMB's exact interval without the exact box's cost).
    pub(super) fn piece(&mut self, t0: f64, t1: f64, with_box: bool) -> Option<Piece<D>> {
        let fine = self.error(t1 - t0) <= self.tolerance;
        if !fine && self.apart(t0, t1) {
            return None;
        }
        self.tests += 1;
        let (Some(ea), Some(eb)) = (self.a.enclosure(t0, t1), self.b.enclosure(t0, t1)) else {
            // Beyond the range rule: nothing exact to say on this piece.
            let aabb = swept_box(&self.a, t0, t1).intersection(&swept_box(&self.b, t0, t1))?;
            return Some(Piece { time: [t0, t1], aabb, fine: false });
        };
        let (time, aabb) = if with_box {
            let i = intersect(&ea, &eb)?;
            (i.time, i.aabb)
        } else {
            (overlap_interval(&ea, &eb)?, Aabb::EMPTY)
        };
        let at = |s: f64| t0 + s * (t1 - t0);
        Some(Piece { time: [at(time[0]), at(time[1])], aabb, fine })
    }

    /// True when the true frames cannot meet on `[t0, t1]`, proven without
    /// the enclosures' corners: along the axis from `a` to `b` through
    /// their closest points at the middle instant (GJK's; any axis is
    /// sound, the projections are computed here), the gap between the two
    /// frames' projections exceeds how far their points can move from
    /// there within the piece (`ρ·h` for the turn about the pivot, less
    /// for an axis near `n`; the relative velocity's projection for the
    /// translation). Each
    /// enclosure's corners stick out `κ·ε` beyond that reach: this is the
    /// cheaper proof for a near miss, the enclosures' FMB test the sharper
    /// one elsewhere.
    pub(super) fn apart(&mut self, t0: f64, t1: f64) -> bool {
        let tm = 0.5 * (t0 + t1);
        let (Some(pa), Some(pb)) = (self.a.pose_at(tm), self.b.pose_at(tm)) else { return false };
        let d = crate::query::distance(&pa, &pb);
        let axis = sub(&d.on_b, &d.on_a);
        let len = norm(&axis);
        if !(d.distance > 0.0 && len > 0.0) {
            return false;
        }
        let n = axis.map(|x| x / len);
        let gap = projection(&pb, &n)[0] - projection(&pa, &n)[1];
        let dv = sub(&self.a.frame.velocity(), &self.b.frame.velocity());
        let reach = self.a.reach(t1 - t0, &n) + self.b.reach(t1 - t0, &n) + 0.5 * (t1 - t0) * dot(&dv, &n).abs();
        // Round-off of the poses and of the projections.
        gap > reach * (1.0 + 1e-12) + 4.0 * (self.a.slack + self.b.slack)
    }

    /// `(1 + κ)ε` of both frames on a sub-interval of length `span`.
    pub(super) fn error(&self, span: f64) -> f64 {
        self.a.error(span) + self.b.error(span)
    }

    /// The earliest (or, `backward`, the latest) piece of `[t0, t1]` where
    /// the enclosures meet, refined to the tolerance (halving only where
    /// the enclosures meet, earliest or latest half first), unless the
    /// depth or the work bound (`budget` tests in all) stops it first;
    /// `None` when they never meet.
    pub(super) fn first_piece(&mut self, t0: f64, t1: f64, backward: bool, budget: usize) -> Option<Piece<D>> {
        let mut stack = [(t0, t1, 0_u32); MAX_DEPTH as usize + 2];
        let mut len = 1;
        while len > 0 {
            len -= 1;
            let (t0, t1, depth) = stack[len];
            if self.error(t1 - t0) <= self.tolerance || depth >= MAX_DEPTH || self.tests >= budget {
                if let Some(p) = self.piece(t0, t1, true) {
                    return Some(p);
                }
                continue;
            }
            let Some(p) = self.piece(t0, t1, false) else { continue };
            // Only where the enclosures meet, halved; the half to search
            // first on top.
            let [u0, u1] = p.time;
            let mid = 0.5 * (u0 + u1);
            let (early, late) = ((u0, mid, depth + 1), (mid, u1, depth + 1));
            (stack[len], stack[len + 1]) = if backward { (early, late) } else { (late, early) };
            len += 2;
        }
        None
    }

    /// The overlap of the two frames' exact swept boxes over `[t0, t1]`
    /// ([`Mover::arc_box`](super::enclosure::Mover::arc_box)): the intersection lies in it at every instant
    /// of the piece; `None` when they do not meet (no contact there).
    pub(super) fn arcs(&self, t0: f64, t1: f64) -> Option<Aabb<D>> {
        self.a.arc_box(t0, t1).intersection(&self.b.arc_box(t0, t1))
    }
}

/// One half-space of a frame in motion: at instant `t`, its points `x`
/// satisfy `n(t)·x ≤ c(t)`, with `n(t) = R(t·ω)·n0` (the face's normal
/// turns with the frame) and `c(t) = β + n(t)·(pivot + t·v) + n0·(o −
/// pivot)` (`o` the frame's origin at `t = 0`): a row of `C⁻¹` (`X ≤ 1`),
/// its negation (`X ≥ 0`), or a simplex's row sum (`ΣX ≤ 1`), each
/// scaled to a unit normal.
#[derive(Clone, Copy)]
pub(super) struct Plane<const D: usize> {
    pub(super) n0: [f64; D],
    /// `β + n0·(o − pivot)`: the part of `c` that the motion keeps.
    pub(super) fixed: f64,
    pub(super) of_b: bool,
}

impl<const D: usize> Plane<D> {
    /// The half-spaces whose intersection is frame `m` (both sides of each
    /// row for a parallelepiped, `D + 1` faces for a simplex).
    pub(super) fn of<'m>(m: &'m Mover<'_, D>, of_b: bool) -> impl Iterator<Item = Plane<D>> + 'm {
        let inv = m.frame.inv();
        let arm = sub(&m.frame.origin(), &m.spin.pivot);
        let sum: [f64; D] = std::array::from_fn(|k| inv.iter().map(|row| row[k]).sum::<f64>());
        let cuboid = m.frame.kind() == FrameKind::Cuboid;
        (0..2 * D + 1).filter_map(move |i| {
            let (n0, beta) = match (i < D, cuboid) {
                (true, _) => (inv[i].map(|x| -x), 0.0),
                (false, true) if i < 2 * D => (inv[i - D], 1.0),
                (false, false) if i == 2 * D => (sum, 1.0),
                _ => return None,
            };
            // Unit normals: the bounds of `Pair::face_bound` grow with
            // the basis's conditioning, which rows of very different
            // lengths (a thin frame's) would spoil for nothing.
            let len = norm(&n0);
            let n0 = n0.map(|x| x / len);
            Some(Plane { n0, fixed: beta / len + dot(&n0, &arm), of_b })
        })
    }
}
