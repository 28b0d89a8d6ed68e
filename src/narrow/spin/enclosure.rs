//! A turning frame's enclosures: over a piece of the step, the frame turned
//! to the middle angle and grown by how far the turn can take it (the
//! module doc of `spin`), a frame that translates, which FMB decides.

use arrayvec::ArrayVec;

use super::motion::{Spin, apply, arc};
use crate::aabb::Aabb;
use crate::frame::{Frame, FrameKind};
use crate::math::{dot, norm, sub};

/// One frame's motion over the step, with the constants of its enclosure.
pub(super) struct Mover<'a, const D: usize> {
    pub(super) frame: &'a Frame<D>,
    pub(super) spin: &'a Spin<D>,
    /// `|ω|`: the angle turned over the whole step.
    pub(super) angle: f64,
    /// The frame's centre (the mean of its vertices) at `t = 0`.
    pub(super) centre: [f64; D],
    /// The largest distance from the pivot to a vertex.
    pub(super) pivot_radius: f64,
    /// The largest distance from the centre to a vertex.
    pub(super) centre_radius: f64,
    /// The centre's distance from the axis of the turn through the pivot.
    pub(super) arm: f64,
    /// `|nᵢ|`, the rows of `C⁻¹`, and for a simplex `|Σ nᵢ|`: turning the
    /// frame keeps them.
    pub(super) row_norms: [f64; D],
    pub(super) row_sum_norm: f64,
    /// Per face (`0..D`: the faces across row `i` of `C⁻¹`, both sides
    /// for a parallelepiped; `D`: a simplex's slanted face), how far the
    /// frame reaches along `n × u` (`n` the face's unit normal, `u` the
    /// axis; 2D: along the face) from the pivot (`[0]`) and from the
    /// centre (`[1]`): the first-order rate at which a turn moves the face
    /// out (see [`Mover::growth`]). Turning about `u` keeps them.
    pub(super) face_widths: [[f64; 4]; 2],
    /// `κ`: how far a vertex moves when every face moves out by one.
    pub(super) kappa: f64,
    /// The round-off of a turned frame's coordinates: a few ulps of the
    /// largest number that goes into them.
    pub(super) slack: f64,
    /// Each vertex relative to the pivot as `a + A·cos θ + B·sin θ` per
    /// coordinate (`[a, A, B]`), `θ` the angle turned: its arc.
    pub(super) arcs: ArrayVec<[[f64; 3]; D], 8>,
}

impl<'a, const D: usize> Mover<'a, D> {
    pub(super) fn new(frame: &'a Frame<D>, spin: &'a Spin<D>) -> Self {
        let vertices = frame.vertex_count() as f64;
        let centre = frame.vertices().fold([0.0; D], |c, v| std::array::from_fn(|k| c[k] + v[k] / vertices));
        let farthest = |q: &[f64; D]| frame.vertices().map(|v| norm(&sub(&v, q))).fold(0.0, f64::max);
        let (pivot_radius, centre_radius) = (farthest(&spin.pivot), farthest(&centre));
        let arm = sub(&centre, &spin.pivot);
        let arm = if D == 2 {
            norm(&arm)
        } else {
            // The part of the arm across the axis (none along it turns).
            let n = spin.angle();
            let along = if n == 0.0 { 0.0 } else { (0..D).map(|k| arm[k] * spin.rate[k] / n).sum::<f64>() };
            (dot(&arm, &arm) - along * along).max(0.0).sqrt()
        };
        let inv = frame.inv();
        let row_norms = inv.map(|row| norm(&row));
        let row_sum_norm = norm::<D>(&std::array::from_fn(|k| inv.iter().map(|row| row[k]).sum::<f64>()));
        let big = |v: [f64; D]| v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let size = frame.aabb().extent().iter().fold(0.0_f64, |m, x| m.max(*x));
        let scale = big(spin.pivot) + big(frame.origin()) + big(frame.velocity()) + pivot_radius * (1.0 + spin.angle());
        let slack = 1e-12 * size + 16.0 * f64::EPSILON * scale;
        let kappa = corner_factor(frame, &row_norms, row_sum_norm);
        let face_widths = [&spin.pivot, &centre].map(|q| face_widths(frame, spin, q));
        Mover {
            frame,
            spin,
            angle: spin.angle(),
            centre,
            pivot_radius,
            centre_radius,
            arm,
            row_norms,
            row_sum_norm,
            face_widths,
            kappa,
            slack,
            arcs: frame.vertices().map(|v| arc(spin, &sub(&v, &spin.pivot))).collect(),
        }
    }

    /// Where the pivot is at instant `t`.
    pub(super) fn track(&self, t: f64) -> [f64; D] {
        let v = self.frame.velocity();
        std::array::from_fn(|k| self.spin.pivot[k] + t * v[k])
    }

    /// The rate at which a vector turning with the frame changes: `ω × n`
    /// (2D: `ω` times `n` turned a quarter turn).
    pub(super) fn rate_of(&self, n: &[f64; D]) -> [f64; D] {
        let w = &self.spin.rate;
        if D == 2 {
            return std::array::from_fn(|k| if k == 0 { -w[2] * n[1] } else { w[2] * n[0] });
        }
        std::array::from_fn(|k| {
            let (i, j) = ((k + 1) % 3, (k + 2) % 3);
            w[i] * n[j] - w[j] * n[i]
        })
    }

    /// The signed angle turned at instant `t` (2D: counter-clockwise;
    /// 3D: about the spin's axis).
    pub(super) fn turned(&self, t: f64) -> f64 {
        if D == 2 { t * self.spin.rate[2] } else { t * self.angle }
    }

    /// The frame's exact swept box over `[t0, t1]` (up to round-off), from
    /// its vertices' arcs: each coordinate of a vertex is `a + A·cos θ +
    /// B·sin θ` plus the pivot's straight path, largest at an end of the
    /// arc or where its derivative `B·cos θ − A·sin θ` turns from positive
    /// to negative (an arc under half a turn has at most one such point).
    /// Second order in the piece's length where the first-order
    /// enclosures are not: a face of the box set by a vertex is tight.
    pub(super) fn arc_box(&self, t0: f64, t1: f64) -> Aabb<D> {
        let (th0, th1) = (self.turned(t0), self.turned(t1));
        let (th0, th1) = (th0.min(th1), th0.max(th1));
        let whole = th1 - th0 >= std::f64::consts::PI;
        let ((s0, c0), (s1, c1)) = (th0.sin_cos(), th1.sin_cos());
        let mut b = Aabb::<D>::EMPTY;
        for arc in &self.arcs {
            for (k, &[a, big_a, big_b]) in arc.iter().enumerate() {
                let (v0, v1) = (big_a * c0 + big_b * s0, big_a * c1 + big_b * s1);
                let (d0, d1) = (big_b * c0 - big_a * s0, big_b * c1 - big_a * s1);
                let m = big_a.hypot(big_b);
                let hi = if whole || (d0 > 0.0 && d1 < 0.0) { m } else { v0.max(v1) };
                let lo = if whole || (d0 < 0.0 && d1 > 0.0) { -m } else { v0.min(v1) };
                b.min[k] = b.min[k].min(a + lo);
                b.max[k] = b.max[k].max(a + hi);
            }
        }
        let v = self.frame.velocity();
        let r = self.slack + 1e-12 * self.pivot_radius;
        Aabb {
            min: std::array::from_fn(|k| self.spin.pivot[k] + b.min[k] + (t0 * v[k]).min(t1 * v[k]) - r),
            max: std::array::from_fn(|k| self.spin.pivot[k] + b.max[k] + (t0 * v[k]).max(t1 * v[k]) + r),
        }
    }

    /// A box containing the frame at every instant of `[t0, t1]`: the
    /// smaller, axis by axis, of the ball of its reach about the moving
    /// pivot and the union of its enclosures on up to 8 pieces (one per
    /// half radian of turn).
    pub(super) fn swept(&self, t0: f64, t1: f64) -> Aabb<D> {
        let ball = swept_box(self, t0, t1);
        let pieces = (self.angle * (t1 - t0) / 0.5).ceil().clamp(1.0, 8.0) as usize;
        let mut union = Aabb::EMPTY;
        for k in 0..pieces {
            let at = |k: usize| t0 + (t1 - t0) * k as f64 / pieces as f64;
            match self.enclosure(at(k), at(k + 1)) {
                Some(e) => union = union.union(&e.aabb()),
                None => return ball,
            }
        }
        Aabb {
            min: std::array::from_fn(|k| ball.min[k].max(union.min[k])),
            max: std::array::from_fn(|k| ball.max[k].min(union.max[k])),
        }
    }

    /// How far a point of the frame can move along unit direction `n`
    /// from where it is at the middle of a sub-interval of length `span`
    /// by turning (the translation is counted apart): `ρ_pivot·h·|n × u|`,
    /// `u` the axis (the rate of `n · R(θ)q` is `R(θ)q · (n × u)`; in 2D
    /// the axis is across every `n`). A turn about `n` itself moves no
    /// point along it.
    pub(super) fn reach(&self, span: f64, n: &[f64; D]) -> f64 {
        let across = if D == 3 && self.angle > 0.0 {
            let u: [f64; D] = std::array::from_fn(|k| self.spin.rate[k] / self.angle);
            let along = dot(n, &u);
            // |n × u|² = 1 − (n · u)², with a margin for round-off.
            ((1.0 - along * along).max(0.0).sqrt() + 1e-9).min(1.0)
        } else {
            1.0
        };
        self.pivot_radius * 0.5 * self.angle * span * across
    }

    /// How far the enclosure on a sub-interval of length `span` strays from
    /// the true frame: `(1 + κ)·ε`.
    pub(super) fn error(&self, span: f64) -> f64 {
        (1.0 + self.kappa) * self.reference(span).1
    }

    /// Which point the enclosure on a sub-interval of length `span` follows
    /// (true: the frame's centre, along the chord of its arc; false: the
    /// pivot, along its straight path), and its `ε` there, with a relative
    /// margin and the round-off of the turned frame: the smaller of
    /// * about the pivot, `ρ_pivot·h` (`h = |ω|·span/2`, a point turned by
    ///   at most `h` from the middle angle moves by at most `ρ·h`);
    /// * about the centre, `ρ_centre·h` plus how far the centre's arc
    ///   strays from its chord at the same instant: `arm·((1 − cos h) + (h
    ///   − sin h)) ≤ arm·(h²/2 + h³/6)` (across the chord, then along it).
    pub(super) fn reference(&self, span: f64) -> (bool, f64) {
        if self.angle == 0.0 {
            return (false, 0.0);
        }
        let h = 0.5 * self.angle * span;
        let about_pivot = self.pivot_radius * h;
        let about_centre = self.centre_radius * h + self.arm * h * h * (0.5 + h / 6.0);
        let (centred, eps) = if about_centre < about_pivot { (true, about_centre) } else { (false, about_pivot) };
        (centred, eps * (1.0 + 1e-12) + self.slack)
    }

    /// How far each face of the enclosure on a sub-interval of length
    /// `span` moves out (per face as in [`Mover::face_widths`]): the
    /// smaller of the whole frame's `ε` ([`Mover::reference`]) and the
    /// face's own bound. A point `w` (from the reference point) of the
    /// frame at the middle angle, turned by `δ` (`|δ| ≤ h`) about `u`,
    /// moves along the face's normal `n` by `sin δ·w·(n × u) + (1 − cos
    /// δ)·n·(u × (u × w))`: at most `h·S + ρ·h²/2` (`S` the frame's reach
    /// along `n × u`, `ρ` its reach from the reference point), plus the
    /// reference point's own stray from its chord. A face across the
    /// axis (`n` along `u`) moves at second order only.
    pub(super) fn growth(&self, span: f64) -> (bool, [f64; 4]) {
        let (centred, eps) = self.reference(span);
        if self.angle == 0.0 {
            return (centred, [eps; 4]);
        }
        let h = 0.5 * self.angle * span;
        let (rho, chord) =
            if centred { (self.centre_radius, self.arm * h * h * (0.5 + h / 6.0)) } else { (self.pivot_radius, 0.0) };
        let widths = &self.face_widths[usize::from(centred)];
        let grow = widths.map(|s| ((s * h + 0.5 * rho * h * h + chord) * (1.0 + 1e-12) + self.slack).min(eps));
        (centred, grow)
    }

    /// The frame enclosing this one on `[t0, t1]`, as a frame translating
    /// over `[0, 1]`: turned to the middle angle, its reference point (see
    /// [`Mover::reference`]) moving in a straight line from where it is at
    /// `t0` to where it is at `t1`, every face moved out by `ε`; `None`
    /// when it is not a valid frame (beyond the range rule).
    pub(super) fn enclosure(&self, t0: f64, t1: f64) -> Option<Frame<D>> {
        let (f, v) = (self.frame, self.frame.velocity());
        let span = t1 - t0;
        if self.angle == 0.0 {
            let origin = std::array::from_fn(|k| f.origin()[k] + t0 * v[k]);
            return Frame::from_inverse(
                f.kind(),
                origin,
                f.components(),
                *f.inv(),
                v.map(|x| x * span),
                f.reach_bound(),
            )
            .ok();
        }
        let (centred, grow) = self.growth(span);
        let (q0, velocity) = if centred {
            let q0 = self.spin.carry(&self.centre, &v, t0);
            (q0, sub(&self.spin.carry(&self.centre, &v, t1), &q0))
        } else {
            (std::array::from_fn(|k| self.spin.pivot[k] + t0 * v[k]), v.map(|x| x * span))
        };
        let q = if centred { self.centre } else { self.spin.pivot };
        let turn = self.spin.matrix(0.5 * (t0 + t1));
        let arm = apply(&turn, &sub(&f.origin(), &q));
        let origin = std::array::from_fn(|k| q0[k] + arm[k]);
        let comps = f.components().map(|c| apply(&turn, &c));
        // (R C)⁻¹ = C⁻¹ Rᵀ: each row of the inverse turns with the frame.
        let inv = f.inv().map(|row| apply(&turn, &row));
        self.grown(origin, comps, inv, grow, velocity)
    }

    /// The frame `(origin, comps, inv)` of this one's kind with each face
    /// moved out by its `e` (per face as in [`Mover::face_widths`]): a
    /// parallelepiped's components lengthened, a simplex enlarged (moving
    /// a simplex's faces out by any amounts gives a simplex of the same
    /// shape).
    pub(super) fn grown(
        &self,
        origin: [f64; D],
        mut comps: [[f64; D]; D],
        mut inv: [[f64; D]; D],
        e: [f64; 4],
        velocity: [f64; D],
    ) -> Option<Frame<D>> {
        // Face `i` moves out by `eᵢ` in the local coordinate `Xᵢ` when `Xᵢ`
        // changes by `eᵢ·|nᵢ|`.
        let a: [f64; D] = std::array::from_fn(|i| e[i] * self.row_norms[i]);
        let origin = std::array::from_fn(|k| origin[k] - (0..D).map(|i| a[i] * comps[i][k]).sum::<f64>());
        let kind = self.frame.kind();
        for i in 0..D {
            let scale = match kind {
                FrameKind::Cuboid => 1.0 + 2.0 * a[i],
                FrameKind::Tetrahedron => 1.0 + e[D] * self.row_sum_norm + a.iter().sum::<f64>(),
            };
            comps[i] = comps[i].map(|x| x * scale);
            inv[i] = inv[i].map(|x| x / scale);
        }
        Frame::from_inverse(kind, origin, comps, inv, velocity, self.frame.reach_bound()).ok()
    }

    /// The frame at rest where it is at instant `t` (exactly, up to
    /// round-off), or `None` beyond the range rule.
    pub(super) fn pose_at(&self, t: f64) -> Option<Frame<D>> {
        let f = self.frame;
        if t == 0.0 || self.angle == 0.0 {
            return Some(f.at(t));
        }
        let turn = self.spin.matrix(t);
        let origin = self.spin.carry(&f.origin(), &f.velocity(), t);
        let comps = f.components().map(|c| apply(&turn, &c));
        let inv = f.inv().map(|row| apply(&turn, &row));
        Frame::from_inverse(f.kind(), origin, comps, inv, [0.0; D], f.reach_bound()).ok()
    }
}

/// Per face of `f` (rows `0..D` of `C⁻¹`; `D`: their sum, a simplex's
/// slanted face), the largest `|(v − q)·(n × u)|` over its vertices `v`,
/// `n` the face's unit normal, `u` the spin's axis (2D: out of the
/// plane): the face's first-order growth per radian of turn about `q`.
pub(super) fn face_widths<const D: usize>(f: &Frame<D>, spin: &Spin<D>, q: &[f64; D]) -> [f64; 4] {
    let angle = spin.angle();
    if angle == 0.0 {
        return [0.0; 4];
    }
    let u: [f64; 3] = if D == 2 { [0.0, 0.0, 1.0] } else { spin.rate.map(|x| x / angle) };
    let inv = f.inv();
    let sum: [f64; D] = std::array::from_fn(|k| inv.iter().map(|row| row[k]).sum::<f64>());
    let mut widths = [0.0; 4];
    for (i, w) in widths.iter_mut().enumerate().take(D + 1) {
        let row = if i < D { &inv[i] } else { &sum };
        let len = norm(row);
        let n: [f64; 3] = std::array::from_fn(|k| if k < D { row[k] / len } else { 0.0 });
        let along = [n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2], n[0] * u[1] - n[1] * u[0]];
        // Unit within round-off: a relative margin keeps the bound.
        *w = f.vertices().map(|v| (0..D).map(|k| (v[k] - q[k]) * along[k]).sum::<f64>().abs()).fold(0.0, f64::max)
            * (1.0 + 1e-12);
    }
    widths
}

/// `κ`: the largest distance a vertex of `f` moves when every face moves
/// out by one (see [`Mover::grown`]; any other point of the grown frame
/// moves by a convex combination of its vertices' moves). A
/// parallelepiped's vertex moves by `Σ ±|nᵢ|·cᵢ`; a simplex's origin by
/// `−Σ |nᵢ|·cᵢ` and its vertex `j` by that plus `(|Σ nᵢ| + Σ |nᵢ|)·cⱼ`.
pub(super) fn corner_factor<const D: usize>(f: &Frame<D>, row_norms: &[f64; D], row_sum_norm: f64) -> f64 {
    let c = f.components();
    let shift: [f64; D] = std::array::from_fn(|k| (0..D).map(|i| row_norms[i] * c[i][k]).sum());
    match f.kind() {
        FrameKind::Cuboid => (0..1usize << D)
            .map(|signs| {
                let v: [f64; D] = std::array::from_fn(|k| {
                    (0..D).map(|i| if signs >> i & 1 == 1 { 1.0 } else { -1.0 } * row_norms[i] * c[i][k]).sum()
                });
                norm(&v)
            })
            .fold(0.0, f64::max),
        FrameKind::Tetrahedron => {
            let grow = row_sum_norm + row_norms.iter().sum::<f64>();
            (0..D).map(|j| norm::<D>(&std::array::from_fn(|k| grow * c[j][k] - shift[k]))).fold(norm(&shift), f64::max)
        }
    }
}

/// A box containing frame `f` (moving by its velocity) at every instant
/// of the step under `spin` (see [`Mover::swept`]).
pub(crate) fn swept_aabb<const D: usize>(f: &Frame<D>, spin: &Spin<D>) -> Aabb<D> {
    if spin.is_still() {
        return f.aabb();
    }
    Mover::new(f, spin).swept(0.0, 1.0)
}

/// `[min, max]` of `n · p` over the points `p` of frame `f` (at rest).
pub(super) fn projection<const D: usize>(f: &Frame<D>, n: &[f64; D]) -> [f64; 2] {
    f.vertices().map(|v| dot(&v, n)).fold([f64::INFINITY, f64::NEG_INFINITY], |[lo, hi], x| [lo.min(x), hi.max(x)])
}

/// The box of the frame over `[t0, t1]` from its enclosure's vertices, or
/// (when not even that frame can be built) from the frame's reach around
/// its pivot: a fallback for poses beyond the range rule.
pub(super) fn swept_box<const D: usize>(m: &Mover<'_, D>, t0: f64, t1: f64) -> Aabb<D> {
    let v = m.frame.velocity();
    // Rounding: the turned points are within a few ulps of the sphere.
    let r = m.pivot_radius * (1.0 + 1e-12);
    let at = |t: f64| -> [f64; D] { std::array::from_fn(|k| m.spin.pivot[k] + t * v[k]) };
    let (p, q) = (at(t0), at(t1));
    Aabb { min: std::array::from_fn(|k| p[k].min(q[k]) - r), max: std::array::from_fn(|k| p[k].max(q[k]) + r) }
}
