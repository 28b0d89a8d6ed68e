//! The candidate separating axes of two frames: both frames' face normals
//! (the rows of `C⁻¹`, plus their sum for a simplex) and, in 3D, the cross
//! products of an edge direction of each (axes of (nearly) parallel edges
//! skipped: the face normals cover those directions). They are the facet
//! normals of the Minkowski difference, for any relative translation, so
//! the queries that need "every direction that matters" loop over them.

use crate::frame::{Frame, FrameKind};
use crate::math::{cross, dot, sub};

/// Edge-pair axes with `|n|² ≤ DEGENERATE · |e_A|² |e_B|²` are skipped.
const DEGENERATE: f64 = 1e-26;

/// Calls `f` on each face normal of `a` then `b` (not normalised: the rows
/// of `C⁻¹`, and their sum for a simplex) until it returns false; false
/// then, true when every normal was visited.
#[inline(always)]
pub(crate) fn each_face_normal<const D: usize>(
    a: &Frame<D>,
    b: &Frame<D>,
    mut f: impl FnMut(&[f64; D]) -> bool,
) -> bool {
    for g in [a, b] {
        let inv = g.inv();
        for n in inv {
            if !f(n) {
                return false;
            }
        }
        if g.kind() == FrameKind::Tetrahedron {
            let sum: [f64; D] = std::array::from_fn(|k| inv.iter().map(|row| row[k]).sum());
            if !f(&sum) {
                return false;
            }
        }
    }
    true
}

/// Calls `f` on each candidate axis (not normalised): the face normals,
/// then in 3D the edge pairs' cross products, until it returns false;
/// false then, true when every axis was visited.
#[inline(always)]
pub(super) fn each_axis<const D: usize>(a: &Frame<D>, b: &Frame<D>, mut f: impl FnMut(&[f64; D]) -> bool) -> bool {
    each_face_normal(a, b, &mut f) && each_edge_axis(a, b, f)
}

/// Calls `f` on each edge-pair axis (3D only: none in 2D), as
/// [`each_axis`] does after the face normals.
#[inline(always)]
pub(crate) fn each_edge_axis<const D: usize>(a: &Frame<D>, b: &Frame<D>, mut f: impl FnMut(&[f64; D]) -> bool) -> bool {
    if D == 3 {
        let (ca, cb) = (a.components(), b.components());
        for ea in edges(a.kind(), &ca) {
            for eb in edges(b.kind(), &cb) {
                let n = cross(&ea, &eb);
                if dot(&n, &n) > DEGENERATE * dot(&ea, &ea) * dot(&eb, &eb) && !f(&std::array::from_fn(|k| n[k])) {
                    return false;
                }
            }
        }
    }
    true
}

/// `[min, max]` of `n · (p − o)` over a frame of `kind` with components `c`
/// whose origin `o'` projects to `base = n · (o' − o)`.
#[inline(always)]
pub(crate) fn range<const D: usize>(kind: FrameKind, c: &[[f64; D]; D], n: &[f64; D], base: f64) -> [f64; 2] {
    let w = c.map(|ci| dot(n, &ci));
    match kind {
        FrameKind::Cuboid => {
            let lo: f64 = w.iter().map(|x| x.min(0.0)).sum();
            let hi: f64 = w.iter().map(|x| x.max(0.0)).sum();
            [base + lo, base + hi]
        }
        FrameKind::Tetrahedron => {
            let lo = w.iter().fold(0.0_f64, |m, &x| m.min(x));
            let hi = w.iter().fold(0.0_f64, |m, &x| m.max(x));
            [base + lo, base + hi]
        }
    }
}

/// A 3D frame's edge directions: its components, and for a simplex their
/// differences (only called with `D == 3`).
fn edges<const D: usize>(kind: FrameKind, c: &[[f64; D]; D]) -> impl Iterator<Item = [f64; 3]> {
    let c: [[f64; 3]; 3] = std::array::from_fn(|i| std::array::from_fn(|k| if i < D && k < D { c[i][k] } else { 0.0 }));
    let all = [c[0], c[1], c[2], sub(&c[1], &c[0]), sub(&c[2], &c[0]), sub(&c[2], &c[1])];
    let count = if kind == FrameKind::Tetrahedron { 6 } else { 3 };
    all.into_iter().take(count)
}
