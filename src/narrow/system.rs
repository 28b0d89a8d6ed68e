//! The FMB inequality system of a pair of frames (fmb-digest §2).
//!
//! `B` is expressed in `A`'s local coordinates: with `C' = C_A⁻¹ C_B`,
//! `O' = C_A⁻¹ (O_B - O_A)` and `V' = C_A⁻¹ (V_B - V_A)`, a point of `B` with
//! local coordinates `X` (at time `t`) has `A`-coordinates
//! `Y = O' + C'X + V't`. The frames' interiors meet iff some `X` (and `t`) in
//! `B`'s domain puts `Y` in `A`'s domain, all inequalities strict. The unknowns
//! are `X₀ .. X_{D-1}` (and `t` as variable `D` when moving), each in `(0, 1)`.
//!
//! As interval rows: a cuboid `A` gives `D` slabs `-O'ⱼ < (C'X + V't)ⱼ < 1 - O'ⱼ`;
//! a tetrahedron `A` gives `D` rows `-O'ⱼ < (C'X + V't)ⱼ` and one row
//! `Σⱼ (C'X + V't)ⱼ < 1 - Σⱼ O'ⱼ`; a tetrahedron `B` adds `Σᵢ Xᵢ < 1`.

use arrayvec::ArrayVec;

use super::elimination::{Bounds, CAP_INITIAL, Infeasible, MAX_VARS, Row, admit_initial};
use super::relative::Relative;
use crate::frame::FrameKind;

/// Builds and admits the rows of the system for `B` seen from `A` (of kind
/// `a_kind`), with `V = D` variables (static) or `V = D + 1` (moving, `t`
/// last).
#[inline(always)]
pub(crate) fn build<const D: usize, const V: usize>(
    a_kind: FrameKind,
    rel: &Relative<D>,
    bounds: &mut Bounds,
    rows: &mut ArrayVec<Row, CAP_INITIAL>,
) -> Result<(), Infeasible> {
    let (o, v) = (rel.o, rel.v);
    let moving = V > D;

    // Row j of `[C' V']` and the magnitude of its terms.
    let coeffs = |j: usize| -> ([f64; MAX_VARS], f64) {
        let mut c = [0.0; MAX_VARS];
        let mut mag = o[j].abs() + 1.0;
        for i in 0..D {
            c[i] = rel.c[i][j];
            mag += c[i].abs();
        }
        if moving {
            c[D] = v[j];
            mag += v[j].abs();
        }
        (c, mag)
    };

    match a_kind {
        FrameKind::Cuboid => {
            for j in 0..D {
                let (c, s) = coeffs(j);
                admit_initial::<V>(Row { a: c, lo: -o[j], hi: 1.0 - o[j], s }, bounds, rows)?;
            }
        }
        FrameKind::Tetrahedron => {
            let mut sum = Row { a: [0.0; MAX_VARS], lo: f64::NEG_INFINITY, hi: 1.0, s: 0.0 };
            for j in 0..D {
                let (c, s) = coeffs(j);
                admit_initial::<V>(Row { a: c, lo: -o[j], hi: f64::INFINITY, s }, bounds, rows)?;
                for i in 0..V {
                    sum.a[i] += c[i];
                }
                sum.hi -= o[j];
                sum.s += s;
            }
            admit_initial::<V>(sum, bounds, rows)?;
        }
    }
    if rel.kind == FrameKind::Tetrahedron {
        let mut a = [0.0; MAX_VARS];
        a[..D].fill(1.0);
        admit_initial::<V>(Row { a, lo: f64::NEG_INFINITY, hi: 1.0, s: (D + 1) as f64 }, bounds, rows)?;
    }
    Ok(())
}
