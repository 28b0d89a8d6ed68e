//! The FMB inequality system of a pair of frames (fmb-digest §2).
//!
//! `B` is expressed in `A`'s local coordinates: with `C' = C_A⁻¹ C_B`,
//! `O' = C_A⁻¹ (O_B - O_A)` and `V' = C_A⁻¹ (V_B - V_A)`, a point of `B` with
//! local coordinates `X` (at time `t`) has `A`-coordinates
//! `Y = O' + C'X + V't`. The frames' interiors meet iff some `X` (and `t`) in
//! `B`'s domain puts `Y` in `A`'s domain, all inequalities strict. The unknowns
//! are `X₀ .. X_{D-1}` (and `t` as variable `D` when moving), each in `(0, 1)`.

use arrayvec::ArrayVec;

use super::elimination::{Bounds, CAP_INITIAL, Infeasible, MAX_VARS, Row, admit_initial};
use crate::frame::{Frame, FrameKind};
use crate::math::{dot, mul_rows, sub};

/// Builds and admits the rows of the system for `a` (inverted) and `b`, with
/// `V = D` variables (static) or `V = D + 1` (moving, `t` last).
#[inline(always)]
pub(crate) fn build<const D: usize, const V: usize>(
    a: &Frame<D>,
    b: &Frame<D>,
    bounds: &mut Bounds,
    rows: &mut ArrayVec<Row, CAP_INITIAL>,
) -> Result<(), Infeasible> {
    let inv = a.inv();
    let o = mul_rows(inv, &sub(&b.origin(), &a.origin()));
    let comps = b.components();
    let moving = V > D;
    let v = if moving { mul_rows(inv, &sub(&b.velocity(), &a.velocity())) } else { [0.0; D] };

    // Row j of `C'` (with `V'_j` as the coefficient of t), and its magnitude.
    let coeffs = |j: usize| -> ([f64; MAX_VARS], f64) {
        let mut c = [0.0; MAX_VARS];
        let mut mag = o[j].abs() + 1.0;
        for i in 0..D {
            c[i] = dot(&inv[j], &comps[i]);
            mag += c[i].abs();
        }
        if moving {
            c[D] = v[j];
            mag += v[j].abs();
        }
        (c, mag)
    };
    let negate = |c: [f64; MAX_VARS]| c.map(|x| -x);

    match a.kind() {
        FrameKind::Cuboid => {
            for j in 0..D {
                let (c, s) = coeffs(j);
                // 0 < Y_j  and  Y_j < 1
                admit_initial::<V>(Row { a: negate(c), b: o[j], s }, bounds, rows)?;
                admit_initial::<V>(Row { a: c, b: 1.0 - o[j], s }, bounds, rows)?;
            }
        }
        FrameKind::Tetrahedron => {
            let mut sum = Row { a: [0.0; MAX_VARS], b: 1.0, s: 0.0 };
            for j in 0..D {
                let (c, s) = coeffs(j);
                // 0 < Y_j
                admit_initial::<V>(Row { a: negate(c), b: o[j], s }, bounds, rows)?;
                for i in 0..V {
                    sum.a[i] += c[i];
                }
                sum.b -= o[j];
                sum.s += s;
            }
            // Σ Y_j < 1
            admit_initial::<V>(sum, bounds, rows)?;
        }
    }
    if b.kind() == FrameKind::Tetrahedron {
        // Σ X_i < 1
        let mut a = [0.0; MAX_VARS];
        a[..D].fill(1.0);
        admit_initial::<V>(Row { a, b: 1.0, s: (D + 1) as f64 }, bounds, rows)?;
    }
    Ok(())
}
