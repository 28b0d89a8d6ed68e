//! One frame seen from another: `B`'s origin, components and velocity in
//! `A`'s local coordinates (`O' = C_A⁻¹(O_B - O_A)`, `C' = C_A⁻¹ C_B`,
//! `V' = C_A⁻¹(V_B - V_A)`).
//!
//! Computed once per pair and shared by the inequality system, the vertex
//! witness and the exact box, so the change of basis is paid once.

use crate::frame::{Frame, FrameKind};
use crate::math::{add, box_vertices, fmax, fmin, mul_rows, sub};

/// Margin, in `A`'s local units, by which a witness vertex must be inside:
/// far outside the touching band of the elimination (1e-12 of the
/// magnitudes of the pair's terms), so the witness and the elimination
/// never disagree. [`Relative::has_vertex_deep_inside`] scales it with
/// those magnitudes, velocity included.
const WITNESS_MARGIN: f64 = 1e-9;

/// `B` in `A`'s local coordinates.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Relative<const D: usize> {
    /// Kind of `B`.
    pub kind: FrameKind,
    /// `O'`.
    pub o: [f64; D],
    /// `c[i]`: `B`'s `i`-th component in `A`'s coordinates (column `i` of `C'`).
    pub c: [[f64; D]; D],
    /// `V'` (zero when the velocities are equal).
    pub v: [f64; D],
}

impl<const D: usize> Relative<D> {
    /// `b` in `a`'s coordinates.
    #[inline(always)]
    pub fn new(a: &Frame<D>, b: &Frame<D>) -> Self {
        let inv = a.inv();
        let comps = b.components();
        Relative {
            kind: b.kind(),
            o: mul_rows(inv, &sub(&b.origin(), &a.origin())),
            c: std::array::from_fn(|i| mul_rows(inv, &comps[i])),
            v: mul_rows(inv, &sub(&b.velocity(), &a.velocity())),
        }
    }

    /// True when some vertex of `B`, at time `t`, lies inside `A` (of kind
    /// `a_kind`) by a clear margin: then the interiors meet. A cheap, exact
    /// sufficient condition tried before elimination.
    #[inline(always)]
    pub fn has_vertex_inside(&self, a_kind: FrameKind, t: f64) -> bool {
        self.has_vertex_inside_by(a_kind, t, WITNESS_MARGIN)
    }

    /// [`Relative::has_vertex_inside`] with the margin scaled by the
    /// largest magnitude of a local coordinate's terms (origin, components,
    /// velocity) when above one: a vertex inside at one instant proves an
    /// interval the elimination keeps. A pair moving a million local units a
    /// step has a touching band of about 1e-6 in the rows with time: with
    /// the fixed margin, `overlaps` accepted a vertex at `t = 0` whose
    /// interval (about 1e-15 of the step) the elimination drops. (A vertex
    /// inside at both ends proves the whole step, far from any band: the
    /// fixed margin serves there.)
    #[inline(always)]
    pub fn has_vertex_deep_inside(&self, a_kind: FrameKind, t: f64) -> bool {
        let scale = (0..D).fold(1.0f64, |m, j| {
            let terms = self.o[j].abs() + self.v[j].abs() + self.c.iter().map(|c| c[j].abs()).sum::<f64>();
            fmax(m, terms)
        });
        self.has_vertex_inside_by(a_kind, t, WITNESS_MARGIN * scale)
    }

    /// Some vertex of `B` at time `t` inside `A` by `margin`.
    #[inline(always)]
    fn has_vertex_inside_by(&self, a_kind: FrameKind, t: f64, margin: f64) -> bool {
        let o: [f64; D] = std::array::from_fn(|j| self.o[j] + t * self.v[j]);
        let inside = |y: &[f64; D]| inside(a_kind, y, margin);
        // Every vertex tested, no early exit: the outcome is unpredictable.
        match self.kind {
            FrameKind::Cuboid => box_vertices(&o, &self.c)[..1 << D].iter().fold(false, |any, y| any | inside(y)),
            FrameKind::Tetrahedron => self.c.iter().fold(inside(&o), |any, c| any | inside(&add(&o, c))),
        }
    }
}

/// True when local coordinates `y` are inside the unit domain by `margin`.
#[inline(always)]
fn inside<const D: usize>(kind: FrameKind, y: &[f64; D], margin: f64) -> bool {
    let low = y.iter().fold(f64::INFINITY, |m, &x| fmin(m, x));
    let high = match kind {
        FrameKind::Cuboid => y.iter().fold(f64::NEG_INFINITY, |m, &x| fmax(m, x)),
        FrameKind::Tetrahedron => y.iter().sum(),
    };
    low > margin && high < 1.0 - margin
}
