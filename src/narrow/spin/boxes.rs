//! The contact's box: the enclosures' exact boxes on pieces covering the
//! contact, clipped to the frames' swept boxes and to second-order lids
//! from the intersection's extreme vertices, refined by branch and bound.

use arrayvec::ArrayVec;

use super::super::intersect;
use super::SpinContact;
use super::interval::{MAX_DEPTH, Pair, Piece};
use super::motion::apply;
use crate::aabb::Aabb;
use crate::math::{dot, invert_columns, norm, sub};

/// The faces of a box, `2k + 1` its maximum along axis `k`, `2k` its
/// minimum: for each, a basis (`D` of the pair's [`Plane`](super::interval::Plane)s) whose vertex
/// bounds the intersection there at a sampled instant.
pub(super) type Bases<const D: usize> = [Option<[u8; D]>; 6];

impl<const D: usize> Pair<'_, D> {
    /// The contact's interval from its first and last refined pieces, its
    /// box from the pieces that cover it ([`Pair::contact_box`]), clipped
    /// to the two frames' swept boxes over the interval: at every instant
    /// the intersection lies in both frames, so in both boxes.
    pub(super) fn contact(mut self) -> Option<SpinContact<D>> {
        let first = self.start()?;
        let last = self.end(&first);
        let time = [first.time[0].max(0.0), last.time[1].min(1.0)];
        let (aabb, box_fine) = self.contact_box(&first, &last);
        let (swept_a, swept_b) = (self.a.swept(time[0], time[1]), self.b.swept(time[0], time[1]));
        // Empty only when the frames' boxes never meet: no contact at all.
        let aabb = aabb.intersection(&swept_a.intersection(&swept_b)?)?.intersection(&self.arcs(time[0], time[1])?)?;
        let time_within_tolerance = first.fine && last.fine;
        Some(SpinContact { time, aabb, time_within_tolerance, box_within_tolerance: box_fine })
    }

    /// The contact's box: the union of the exact boxes of the enclosures
    /// on pieces that cover the contact (its first and last pieces and
    /// [`MIDDLE_PIECES`] between them), refined by branch and bound
    /// against a box the true intersection is known to reach (the exact
    /// boxes of the true frames' intersection at sampled instants): the
    /// piece reaching farthest beyond it plus the tolerance is halved (and
    /// its middle instant sampled) until none does, within
    /// [`MAX_BOX_TESTS`] FMB tests. With it, whether the box is within the
    /// tolerance of that known part of the true box on every face.
    pub(super) fn contact_box(&mut self, first: &Piece<D>, last: &Piece<D>) -> (Aabb<D>, bool) {
        // Round-off of the sampled poses: the flag stays a proof.
        let margin = self.tolerance - 4.0 * (self.a.slack + self.b.slack);
        let mut boxes = Boxes { inner: Aabb::EMPTY, kept: Aabb::EMPTY, pieces: ArrayVec::new(), margin };
        for t in [first.time, [first.time[0], last.time[1]], last.time].map(|[t0, t1]| 0.5 * (t0 + t1)) {
            self.sample(t, &mut boxes);
        }
        for p in [Some(*first), (last.time != first.time).then_some(*last)].into_iter().flatten() {
            // An end piece with no box left has no contact: nothing to add.
            if let Some(p) = self.clipped(p, &everything()) {
                boxes.add(p);
            }
        }
        let (from, to) = (first.time[1], last.time[0]);
        if from < to {
            let at = |k: usize| from + (to - from) * k as f64 / MIDDLE_PIECES as f64;
            for k in 0..MIDDLE_PIECES {
                self.box_piece(at(k), at(k + 1), &everything(), &mut boxes);
            }
        }
        let budget = self.tests + MAX_BOX_TESTS;
        while self.tests < budget {
            let Some(i) = boxes.widest() else { break };
            let p = boxes.pieces.swap_remove(i);
            let [t0, t1] = p.time;
            let mid = 0.5 * (t0 + t1);
            if !(t0 < mid && mid < t1) || t1 - t0 < 0.5_f64.powi(MAX_DEPTH as i32) {
                // As fine as the step is cut: it joins the box as it is.
                boxes.kept = boxes.kept.union(&p.aabb);
                continue;
            }
            self.sample(mid, &mut boxes);
            // Only the faces where the piece reaches beyond the bound need
            // a lid (bit `2k + 1`: the maximum along axis `k`).
            let bound = boxes.bound();
            let beyond = (0..D).fold(0_u8, |m, k| {
                m | u8::from(p.aabb.max[k] > bound.max[k]) << (2 * k + 1)
                    | u8::from(p.aabb.min[k] < bound.min[k]) << (2 * k)
            });
            let (early, late) = if beyond != 0 && self.lids_may_hold(0.5 * (t1 - t0)) {
                self.list_planes();
                let at = self.planes_at(mid);
                let bases = self.bases(&at, beyond);
                (self.lid(&at, [t0, mid], mid, &bases, 1.0), self.lid(&at, [mid, t1], mid, &bases, 1.0))
            } else {
                (everything(), everything())
            };
            // The piece's own box holds the intersection over both halves
            // too (their enclosures' boxes may reach beyond it, and so
            // would undo the clipping the piece already had).
            for (span, lid) in [([t0, mid], early), ([mid, t1], late)] {
                if let Some(lid) = lid.intersection(&p.aabb) {
                    self.box_piece(span[0], span[1], &lid, &mut boxes);
                }
            }
        }
        boxes.finish()
    }

    /// The exact box of the true frames' intersection at instant `t`, if
    /// they overlap then, joins the part of the true box known.
    pub(super) fn sample(&mut self, t: f64, boxes: &mut Boxes<D>) {
        let (Some(a), Some(b)) = (self.a.pose_at(t), self.b.pose_at(t)) else { return };
        self.tests += 1;
        if let Some(i) = intersect(&a, &b) {
            boxes.inner = boxes.inner.union(&i.aabb);
        }
    }

    /// The piece `[t0, t1]` of the box, if its enclosures meet: when the
    /// overlap of the enclosures' own boxes is already within the
    /// tolerance of the known part of the true box, that overlap joins the
    /// box and FMB is not asked; else the piece with its exact box. Both
    /// clipped to `lid`, a box the true intersection stays in over the
    /// piece (`Pair::lid`).
    pub(super) fn box_piece(&mut self, t0: f64, t1: f64, lid: &Aabb<D>, boxes: &mut Boxes<D>) {
        let Some(arcs) = self.arcs(t0, t1).and_then(|a| a.intersection(lid)) else { return };
        let (Some(ea), Some(eb)) = (self.a.enclosure(t0, t1), self.b.enclosure(t0, t1)) else {
            // Beyond the range rule: the piece as `piece` bounds it.
            if let Some(p) = self.piece(t0, t1, true).and_then(|p| self.clipped(p, lid)) {
                boxes.add(p);
            }
            return;
        };
        let Some(reach) = ea.aabb().intersection(&eb.aabb()).and_then(|r| r.intersection(&arcs)) else { return };
        if within(&reach, &boxes.bound()) {
            boxes.kept = boxes.kept.union(&reach);
            return;
        }
        self.tests += 1;
        let Some(i) = intersect(&ea, &eb) else { return };
        let at = |s: f64| t0 + s * (t1 - t0);
        let fine = self.error(t1 - t0) <= self.tolerance;
        if let Some(p) = self.clipped(Piece { time: [at(i.time[0]), at(i.time[1])], aabb: i.aabb, fine }, lid) {
            boxes.add(p);
        }
    }

    /// Piece `p` with its box clipped to [`Pair::arcs`] over its interval
    /// (the enclosures' first-order excess removed where a vertex sets a
    /// face of the box) and to `lid` (a box the intersection stays in over
    /// the piece `p` comes from).
    pub(super) fn clipped(&self, mut p: Piece<D>, lid: &Aabb<D>) -> Option<Piece<D>> {
        p.aabb = p.aabb.intersection(&self.arcs(p.time[0], p.time[1])?)?.intersection(lid)?;
        Some(p)
    }

    /// The pair's half-spaces ([`Plane`](super::interval::Plane)) at instant `t`: their normals
    /// `n(t)`, the normals' rates `n'(t)` and the offsets `c(t)`.
    pub(super) fn planes_at(&self, t: f64) -> Planes<D> {
        let turns = [self.a.spin.matrix(t), self.b.spin.matrix(t)];
        let movers = [&self.a, &self.b];
        let mut at = Planes { n: [[0.0; D]; 12], rate: [[0.0; D]; 12], c: [0.0; 12] };
        for (i, p) in self.planes.iter().enumerate() {
            let side = usize::from(p.of_b);
            at.n[i] = apply(&turns[side], &p.n0);
            at.rate[i] = movers[side].rate_of(&at.n[i]);
            at.c[i] = p.fixed + dot(&at.n[i], &movers[side].track(t));
        }
        at
    }

    /// False when no lid ([`Pair::face_bound`]) can hold over pieces of
    /// length `span`: both frames turn by a radian or more (the weights
    /// move by at least the turn of the frame holding most of the basis,
    /// times `‖M⁻¹‖ ≥ 1`), or the frames turn by half a radian or more
    /// relative to each other. Spares the search for bases.
    pub(super) fn lids_may_hold(&self, span: f64) -> bool {
        let relative = norm(&sub(&self.a.spin.rate, &self.b.spin.rate));
        self.a.angle.min(self.b.angle) * span < 1.0 && relative * span < 0.5
    }

    /// For each face of the box in `faces` (bit `2k + 1`: the maximum
    /// along axis `k`, bit `2k`: the minimum), the basis (`D` half-spaces whose normals
    /// the face's outward axis is a positive combination of) whose vertex
    /// lies least far out at the instant of `at`: by linear programming duality
    /// every such vertex bounds the intersection on that face, and the
    /// least of them is the intersection's own extreme (its optimal basis)
    /// when the frames overlap then. Every `D` of the pair's half-spaces
    /// are tried (220 in 3D at most: a few µs, once a halving).
    pub(super) fn bases(&self, at: &Planes<D>, faces: u8) -> Bases<D> {
        let m = self.planes.len();
        let mut best: [(f64, Option<[u8; D]>); 6] = [(f64::INFINITY, None); 6];
        let mut idx: [usize; D] = std::array::from_fn(|i| i);
        loop {
            let rows: [[f64; D]; D] = std::array::from_fn(|j| at.n[idx[j]]);
            // The adjugate: `adj[j]·n[i] = det·δᵢⱼ` (rows of `det·N⁻ᵀ`),
            // whose signs decide the weights before any division.
            let adj: [[f64; D]; D] = std::array::from_fn(|j| {
                let (a, b) = (&rows[(j + 1) % D], &rows[(j + 2) % D]);
                std::array::from_fn(|x| {
                    if D == 2 {
                        [rows[1 - j][1], -rows[1 - j][0]][x] * if j == 0 { 1.0 } else { -1.0 }
                    } else {
                        a[(x + 1) % D] * b[(x + 2) % D] - a[(x + 2) % D] * b[(x + 1) % D]
                    }
                })
            });
            let det = dot(&adj[0], &rows[0]);
            // A nearly singular basis bounds nothing useful (unit normals).
            if det.abs() > 1e-9 {
                for (f, b) in best.iter_mut().enumerate().take(2 * D).filter(|(f, _)| faces >> f & 1 == 1) {
                    let (k, s) = (f / 2, if f % 2 == 1 { det } else { -det });
                    if (0..D).all(|j| s * adj[j][k] > 0.0) {
                        let value = (0..D).map(|j| at.c[idx[j]] * adj[j][k]).sum::<f64>() * s / (det * det);
                        if value < b.0 {
                            *b = (value, Some(idx.map(|i| i as u8)));
                        }
                    }
                }
            }
            // The next `D` of the `m` half-spaces, in lexicographic order.
            let Some(i) = (0..D).rev().find(|&i| idx[i] < m - D + i) else { break };
            idx[i] += 1;
            for j in i + 1..D {
                idx[j] = idx[j - 1] + 1;
            }
        }
        best.map(|b| b.1)
    }

    /// A box the true intersection stays in at every instant of `span`,
    /// from the bases found at `tc` (in `span`; the half-spaces then in
    /// `at`; see
    /// [`Pair::face_bound`]): unbounded on the faces with no basis or
    /// whose bound does not hold over the piece. Second order in the
    /// piece's length where a basis is optimal (`second` scales the
    /// second-order term: 1 but in the tests that show it is needed).
    pub(super) fn lid(&self, at: &Planes<D>, span: [f64; 2], tc: f64, bases: &Bases<D>, second: f64) -> Aabb<D> {
        let mut lid = everything();
        for (f, basis) in bases.iter().enumerate().take(2 * D) {
            let Some(basis) = basis else { continue };
            let up = f % 2 == 1;
            if let Some(x) = self.face_bound(at, span, tc, basis, f / 2, up, second) {
                if up {
                    lid.max[f / 2] = x;
                } else {
                    lid.min[f / 2] = -x;
                }
            }
        }
        lid
    }

    /// A bound on `s·x_k` (`s = 1` when `up`, else −1) over the true
    /// intersection at every instant `t` of `span`, from the basis `basis`
    /// (its half-spaces at `tc` in `at`), or `None` when it cannot be
    /// proven over the whole span.
    ///
    /// Weak duality: while the basis's normals combine into `s·e_k` with
    /// weights `y(t) ≥ 0`, every point of the intersection has `s·x_k ≤
    /// s·p_k(t)`, `p(t)` the basis's vertex. In the coordinates of the
    /// frame `F` with most of the basis (turning and moving with it), its
    /// planes stand still and only the other frame's (at most one) turns,
    /// at the relative rate `Δω`, while `e_k` turns at `ω_F`; so `|y(t) −
    /// y(tc)| ≤ K·(|ω_F| + |Δω|·y_O)·|t − tc|` (`K` bounds `‖M(t)⁻¹‖`, `M`
    /// the basis's normals, from `‖M(tc)⁻¹‖` and `|Δω|`), and the weights
    /// stay positive while that is below their least value.
    ///
    /// The vertex: a vertex of `F` (no plane of the other frame) follows
    /// its arc, `|p''| ≤ ω_F²·|q|` (`q` from `F`'s pivot); else it is where
    /// a line of `F` (an edge; 2D: a side) crosses the other frame's plane,
    /// at the parameter `σ = num/den` along the line (`den = n·d`, the
    /// cosine between the plane's normal and the line), whose first and
    /// second derivatives follow from those of `num` and `den`, bounded by
    /// the rates of the two frames. So `s·p_k(t) ≤ s·p_k(tc) +
    /// s·p_k'(tc)·(t − tc) + P₂·(t − tc)²/2`: second order where the face
    /// is at its extreme, where first-order enclosures are not.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn face_bound(
        &self,
        at: &Planes<D>,
        span: [f64; 2],
        tc: f64,
        basis: &[u8; D],
        k: usize,
        up: bool,
        second: f64,
    ) -> Option<f64> {
        let s = if up { 1.0 } else { -1.0 };
        let e: [f64; D] = std::array::from_fn(|x| if x == k { s } else { 0.0 });
        let l = (tc - span[0]).max(span[1] - tc);
        let j_of = |j: usize| basis[j] as usize;
        let rows: [[f64; D]; D] = std::array::from_fn(|j| at.n[j_of(j)]);
        // `g[j]·n[i] = δᵢⱼ`: the columns of `M⁻¹` as rows.
        let (g, _) = invert_columns(&rows)?;
        let p: [f64; D] = std::array::from_fn(|x| (0..D).map(|j| at.c[j_of(j)] * g[j][x]).sum());
        let of_b = |j: usize| self.planes[j_of(j)].of_b;
        // 2D, one side of each: the frame that comes first, as the
        // planes do (the same rounding in either order of the arguments).
        let count_b = (0..D).filter(|&j| of_b(j)).count();
        let f_is_b = if 2 * count_b == D { self.b_first } else { 2 * count_b > D };
        let (fm, om) = if f_is_b { (&self.b, &self.a) } else { (&self.a, &self.b) };
        let others = || (0..D).filter(move |&j| of_b(j) != f_is_b);
        if others().count() > 1 {
            return None;
        }
        let other = others().next();
        let (wf, wo) = (fm.spin.rate, om.spin.rate);
        let (af, ao) = (fm.angle, om.angle);
        let dw = norm(&sub(&wo, &wf));
        let kc = g.iter().map(|r| dot(r, r)).sum::<f64>().sqrt();
        let shrink = 1.0 - kc * dw * l;
        // NaN fails every comparison: no bound then.
        let invertible = shrink > 0.5;
        if !invertible {
            return None;
        }
        let big_k = kc / shrink * (1.0 + 1e-12);
        let y: [f64; D] = std::array::from_fn(|j| s * g[j][k]);
        let least = y.iter().fold(f64::INFINITY, |m, x| m.min(*x));
        let y_other = other.map_or(0.0, |j| y[j]);
        let positive = least > big_k * (af + dw * y_other) * l * (1.0 + 1e-9) + 1e-12 * kc;
        if !positive {
            return None;
        }
        let (vf, vo) = (fm.frame.velocity(), om.frame.velocity());
        let q = sub(&p, &fm.track(tc));
        let (qn, af2) = (norm(&q), af * af);
        // Where `p` moves at `tc` as a point of `F`.
        let moving = std::array::from_fn(|x| vf[x] + fm.rate_of(&q)[x]);
        let (value, rate, curve, ill) = match other {
            None => (dot(&e, &p), dot(&e, &moving), af2 * qn, 0.0),
            Some(jo) => {
                let (n, c) = (rows[jo], at.c[j_of(jo)]);
                // The line: through `p`, along the planes of `F` in the basis.
                let d: [f64; D] = if D == 2 {
                    let m = rows[(jo + 1) % 2];
                    std::array::from_fn(|x| if x == 0 { -m[1] } else { m[0] })
                } else {
                    let (m1, m2) = {
                        let mut f = (0..D).filter(|&j| j != jo).map(|j| rows[j]);
                        (f.next()?, f.next()?)
                    };
                    std::array::from_fn(|x| m1[(x + 1) % D] * m2[(x + 2) % D] - m1[(x + 2) % D] * m2[(x + 1) % D])
                };
                let len = norm(&d);
                let crossing = len > 0.0;
                if !crossing {
                    return None;
                }
                let d = d.map(|x| x / len);
                let den = dot(&n, &d);
                let den_min = den.abs() - dw * l;
                let across = den_min > 0.5 * den.abs();
                if !across {
                    return None;
                }
                let num = c - dot(&n, &p);
                let sigma = num / den;
                let (to, dv) = (om.track(tc), sub(&vo, &vf));
                let n_rate = om.rate_of(&n);
                let num_rate = dot(&n_rate, &sub(&to, &p)) + dot(&n, &sub(&vo, &moving));
                let den_rate = dot(&n_rate, &d) + dot(&n, &fm.rate_of(&d));
                let sigma_rate = (num_rate - sigma * den_rate) / den;
                let value = dot(&e, &p) + sigma * dot(&e, &d);
                let rate = dot(&e, &moving) + sigma_rate * dot(&e, &d) + sigma * dot(&e, &fm.rate_of(&d));
                // Bounds over the span (in `F`'s coordinates).
                let gap = norm(&sub(&to, &fm.track(tc))) + norm(&dv) * l;
                let g1 = ao * gap + norm(&dv);
                let g2 = ao * ao * gap + 2.0 * ao * norm(&dv);
                let (d1, d2) = (dw, af * dw + dw * dw);
                let (n1, n2) = (g1 + d1 * qn, g2 + d2 * qn);
                let s0 = (num.abs() + n1 * l) / den_min;
                let s1 = (n1 + s0 * d1) / den_min;
                let s2 = (n2 + 2.0 * s1 * d1 + s0 * d2) / den_min;
                (value, rate, af2 * (qn + s0) + 2.0 * af * s1 + s2, 1.0 / den.abs())
            }
        };
        let first = (rate * (span[1] - tc)).max(rate * (span[0] - tc)).max(0.0);
        // Round-off, amplified by the basis's conditioning.
        let margin = 4.0 * (self.a.slack + self.b.slack) * (1.0 + kc * (D as f64).sqrt() + ill) + 1e-12 * first;
        let bound = value + first + second * 0.5 * curve * l * l + margin;
        bound.is_finite().then_some(bound)
    }
}

/// The pair's half-spaces at one instant (see [`Pair::planes_at`]).
pub(super) struct Planes<const D: usize> {
    pub(super) n: [[f64; D]; 12],
    pub(super) rate: [[f64; D]; 12],
    pub(super) c: [f64; 12],
}

/// The box of all space: no bound yet.
pub(super) fn everything<const D: usize>() -> Aabb<D> {
    Aabb { min: [f64::NEG_INFINITY; D], max: [f64::INFINITY; D] }
}

/// Pieces the middle of a contact (between its first and last refined
/// pieces) is first covered by, for its box.
pub(super) const MIDDLE_PIECES: usize = 4;

/// Most pieces the box's refinement holds at once (beyond, a piece joins
/// the box as it is).
pub(super) const BOX_PIECES: usize = 512;

/// Most FMB tests [`intersect_spinning`](super::intersect_spinning) spends refining a contact's box
/// (after the search for its ends; each halving is three: the two halves
/// and the true frames at the middle instant).
pub const MAX_BOX_TESTS: usize = 2048;

/// A contact's box while it is refined: `inner`, the part of the true box
/// known (exact boxes of the true intersection at sampled instants);
/// `kept`, the box of the pieces settled; `pieces`, those that may still
/// reach beyond `inner` plus the tolerance (`margin`: the tolerance less
/// the round-off of the sampled poses).
pub(super) struct Boxes<const D: usize> {
    pub(super) inner: Aabb<D>,
    pub(super) kept: Aabb<D>,
    pub(super) pieces: ArrayVec<Piece<D>, BOX_PIECES>,
    pub(super) margin: f64,
}

impl<const D: usize> Boxes<D> {
    /// `inner` grown by the tolerance: a box within it is within the
    /// tolerance of the true box.
    pub(super) fn bound(&self) -> Aabb<D> {
        Aabb { min: self.inner.min.map(|x| x - self.margin), max: self.inner.max.map(|x| x + self.margin) }
    }

    /// A piece of the contact: settled when it is within the bound, else
    /// held for refinement (settled as it is when the array is full even
    /// after settling those now within the bound).
    pub(super) fn add(&mut self, p: Piece<D>) {
        let bound = self.bound();
        if self.pieces.is_full() {
            let kept = &mut self.kept;
            self.pieces.retain(|q| {
                let settled = within(&q.aabb, &bound);
                if settled {
                    *kept = kept.union(&q.aabb);
                }
                !settled
            });
        }
        if within(&p.aabb, &bound) || self.pieces.try_push(p).is_err() {
            self.kept = self.kept.union(&p.aabb);
        }
    }

    /// The piece that reaches farthest beyond the bound on some face, if
    /// any does. Pieces now within the bound are settled on the way (the
    /// bound only grows, so they stay within it): the scan stays as short
    /// as the pieces still to refine.
    pub(super) fn widest(&mut self) -> Option<usize> {
        let bound = self.bound();
        let beyond = |p: &Piece<D>| {
            (0..D)
                .map(|k| (p.aabb.max[k] - bound.max[k]).max(bound.min[k] - p.aabb.min[k]))
                .fold(f64::NEG_INFINITY, f64::max)
        };
        let kept = &mut self.kept;
        self.pieces.retain(|p| {
            let settled = beyond(p) <= 0.0;
            if settled {
                *kept = kept.union(&p.aabb);
            }
            !settled
        });
        let (i, by) = self
            .pieces
            .iter()
            .enumerate()
            .map(|(i, p)| (i, beyond(p)))
            .fold((0, 0.0), |m, x| if x.1 > m.1 { x } else { m });
        (by > 0.0).then_some(i)
    }

    /// The box, and whether it is within the tolerance of the known part
    /// of the true box on every face.
    pub(super) fn finish(self) -> (Aabb<D>, bool) {
        let aabb = self.pieces.iter().fold(self.kept, |b, p| b.union(&p.aabb));
        let fine = !self.inner.is_empty() && within(&aabb, &self.bound());
        (aabb, fine)
    }
}

/// True when box `inner` lies within box `outer`.
pub(super) fn within<const D: usize>(inner: &Aabb<D>, outer: &Aabb<D>) -> bool {
    (0..D).all(|k| outer.min[k] <= inner.min[k] && inner.max[k] <= outer.max[k])
}
