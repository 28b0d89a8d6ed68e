//! A separating-axis test (SAT) for frames: the independent oracle FMB is
//! validated against, and its benchmark peer.
//!
//! Two convex polytopes have disjoint interiors iff their projections on some
//! candidate axis do not overlap with positive length. The candidates are the
//! face normals of both frames and, in 3D, the cross products of an edge
//! direction of each. They depend only on the frames' components, not on
//! their positions, so a translating pair has the same candidates at every
//! instant: the instants at which the interiors meet are the intersection,
//! over the axes, of the open time intervals during which the projections
//! overlap, clipped to the step `[0, 1]`. That gives the exact contact
//! interval, not just a yes/no.
//!
//! # Method
//! Everything is computed once per call, without vertices or allocation, and
//! the test stops at the first axis that separates over the whole step.
//! * **A's faces.** The rows of `C_A⁻¹` (cached by the frame) are A's face
//!   normals, plus their sum for a tetrahedron. A projects to `[0, 1]` on
//!   each. B projects through `p = C_A⁻¹ (O_B − O_A)` and `C' = C_A⁻¹ C_B`: B
//!   expressed in A's local coordinates (Gottschalk's OBB test works the same
//!   way, with a rotation instead of `C_A⁻¹`).
//! * **B's faces.** The rows of `C_B⁻¹`, plus their sum for a tetrahedron.
//! * **Edge pairs (3D).** Computed in A's local coordinates, where A's edge
//!   directions are `eᵢ` (and `eⱼ − eᵢ` for a tetrahedron), so each axis
//!   `eᵢ × e` is a shuffle of B's edge `e` and A projects onto it for free.
//!   Axes from (nearly) parallel edges, `|n|² ≤ 1e-26 |e_A|² |e_B|²`, are
//!   skipped: every non-zero axis is a valid certificate, and the others
//!   suffice when edges are parallel.
//!
//! A frame of kind cuboid with origin projection `o` and component
//! projections `xᵢ` projects to `o + [Σ min(0, xᵢ), Σ max(0, xᵢ)]`; a
//! tetrahedron to `o + [min(0, minᵢ xᵢ), max(0, maxᵢ xᵢ)]`.
//!
//! # Touching policy
//! The same as FMB's ([`crate::narrow`]): touching is not a collision. An
//! axis separates when the gap between the projections is at least
//! `-1e-12 · scale`, where `scale` is the sum of the magnitudes on that axis
//! (B's offset, both projections' lengths, the relative speed); a moving
//! pair must overlap during a time interval longer than `1e-12` relative to
//! the scale of its end points. Both tests are invariant under translating
//! and scaling the whole scene.
//!
//! ```
//! use fmbgrid::{Frame3, sat};
//! let unit = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
//! let a = Frame3::cuboid([0.0; 3], unit)?;
//! let b = Frame3::tetrahedron([0.5; 3], unit)?.with_velocity([-4.0, 0.0, 0.0])?;
//! let time = sat::contact_interval(&a, &b).unwrap();
//! assert_eq!(time[0], 0.0);
//! assert!((time[1] - 0.375).abs() < 1e-12); // b has left a by t = 1.5 / 4
//! let fmb = fmbgrid::intersect(&a, &b).unwrap().time; // the oracle agrees with FMB
//! assert!((time[0] - fmb[0]).abs() < 1e-9 && (time[1] - fmb[1]).abs() < 1e-9);
//! assert!(sat::overlaps(&a, &b) && fmbgrid::overlaps(&a, &b));
//! # Ok::<(), fmbgrid::FrameError>(())
//! ```

use crate::frame::{Frame, FrameKind};
use crate::math::{dot, sub};

/// Relative tolerance of the touching policy (the same as FMB's).
const EPS: f64 = 1e-12;

/// Edge-pair axes with `|n|² ≤ DEGENERATE · |e_A|² |e_B|²` are skipped.
const DEGENERATE: f64 = 1e-26;

/// A frame's projection on one of its own face normals.
const UNIT: [f64; 2] = [0.0, 1.0];

/// True when the interiors of `a` and `b` meet at some instant `t ∈ [0, 1]`
/// (touching is not a collision). Agrees with [`crate::overlaps`] except
/// within about `1e-12` (relative) of touching.
///
/// ```
/// use fmbgrid::{Frame2, Frame3, sat};
/// let unit = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let a = Frame3::cuboid([0.0; 3], unit)?;
/// let b = Frame3::tetrahedron([0.5; 3], unit)?;
/// let face = Frame3::tetrahedron([1.0, 0.0, 0.0], unit)?; // shares a face with `a`
/// assert!(sat::overlaps(&a, &b));
/// assert!(!sat::overlaps(&a, &face));
/// assert!(sat::overlaps(&a, &face.with_velocity([-0.5, 0.0, 0.0])?));
///
/// let square = Frame2::from_aabb([0.0, 0.0], [1.0, 1.0])?;
/// let corner = Frame2::from_aabb([1.0, 1.0], [2.0, 2.0])?; // touches at a corner
/// assert!(!sat::overlaps(&square, &corner));
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
pub fn overlaps<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> bool {
    contact_interval(a, b).is_some()
}

/// `[t_enter, t_exit] ⊆ [0, 1]`, the instants of the step during which the
/// interiors of `a` and `b` meet, or `None` when they never do (or only at a
/// single instant). Frames with equal velocities give `Some([0, 1])` iff
/// they overlap.
///
/// ```
/// use fmbgrid::{Frame2, sat};
/// let p = Frame2::from_aabb([0.0, 0.0], [1.0, 1.0])?;
/// let q = Frame2::cuboid([-1.0, 0.25], [[0.5, 0.0], [0.0, 0.5]])?.with_velocity([4.0, 0.0])?;
/// assert_eq!(sat::contact_interval(&p, &q), Some([0.125, 0.5]));
/// // Touching at t = 0, then receding: no contact.
/// let r = Frame2::from_aabb([-1.0, 0.0], [0.0, 1.0])?.with_velocity([-1.0, 0.0])?;
/// assert_eq!(sat::contact_interval(&p, &r), None);
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
pub fn contact_interval<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Option<[f64; 2]> {
    let () = Frame::<D>::SUPPORTED;
    // The (swept) boxes are closed supersets: a cheap, exact rejection.
    if !a.aabb().intersects(&b.aabb()) {
        return None;
    }
    let window = if a.velocity() == b.velocity() { separate::<D, false>(a, b) } else { separate::<D, true>(a, b) };
    window.map(|w| [w.lo, w.hi])
}

/// The open time window `lo < t < hi` not yet excluded by an axis; `*_s` are
/// the round-off scales of its ends.
#[derive(Clone, Copy, Debug)]
struct Window {
    lo: f64,
    hi: f64,
    lo_s: f64,
    hi_s: f64,
}

impl Window {
    const STEP: Window = Window { lo: 0.0, hi: 1.0, lo_s: 1.0, hi_s: 1.0 };

    /// Narrows the window to the instants at which the projections on one
    /// axis overlap with positive length; false when none remain.
    ///
    /// `a` is A's projection relative to A's origin, `off + b` B's, and `s`
    /// B's speed relative to A along the axis (ignored unless `MOVING`).
    #[inline(always)]
    fn axis<const MOVING: bool>(&mut self, a: [f64; 2], off: f64, b: [f64; 2], s: f64) -> bool {
        // Overlap at t:  off + b[0] + s·t < a[1]  and  a[0] < off + b[1] + s·t.
        let below = a[1] - off - b[0]; // s·t < below
        let above = off + b[1] - a[0]; // −s·t < above
        let scale = off.abs() + (a[1] - a[0]) + (b[1] - b[0]);
        if !MOVING {
            let tol = EPS * scale;
            return below > tol && above > tol;
        }
        let speed = s.abs();
        let scale = scale + speed;
        let tol = EPS * scale;
        if speed <= tol {
            // Negligible speed: a static test, loosened by the neglected motion.
            return below + speed > tol && above + speed > tol;
        }
        let inv = 1.0 / s;
        let (lo, hi) = if s > 0.0 { (-above * inv, below * inv) } else { (below * inv, -above * inv) };
        let end_s = scale / speed;
        // Selects rather than branches: which end moves is unpredictable.
        let (new_lo, new_hi) = (lo > self.lo, hi < self.hi);
        self.lo_s = if new_lo { end_s } else { self.lo_s };
        self.lo = if new_lo { lo } else { self.lo };
        self.hi_s = if new_hi { end_s } else { self.hi_s };
        self.hi = if new_hi { hi } else { self.hi };
        self.hi - self.lo > EPS * (self.lo_s + self.hi_s)
    }
}

/// Projection, relative to the frame's origin, of a frame of `kind` whose
/// components project to `x`. Branch-free: the signs of `x` are random.
#[inline(always)]
fn range<const N: usize>(kind: FrameKind, x: &[f64; N]) -> [f64; 2] {
    match kind {
        FrameKind::Cuboid => {
            // [Σ min(0, xᵢ), Σ max(0, xᵢ)] = (Σ xᵢ ∓ Σ |xᵢ|) / 2.
            let (mut sum, mut mag) = (0.0, 0.0);
            for &v in x {
                sum += v;
                mag += v.abs();
            }
            [0.5 * (sum - mag), 0.5 * (sum + mag)]
        }
        FrameKind::Tetrahedron => {
            let (mut lo, mut hi) = (0.0f64, 0.0f64);
            for &v in x {
                lo = if v < lo { v } else { lo };
                hi = if v > hi { v } else { hi };
            }
            [lo, hi]
        }
    }
}

/// Runs every candidate axis; the window of contact, or `None` at the first
/// axis that separates over the whole step.
#[inline(always)]
fn separate<const D: usize, const MOVING: bool>(a: &Frame<D>, b: &Frame<D>) -> Option<Window> {
    let mut w = Window::STEP;
    let (ka, kb) = (a.kind(), b.kind());
    let d = sub(&b.origin(), &a.origin());
    let vel = if MOVING { sub(&b.velocity(), &a.velocity()) } else { [0.0; D] };

    // A's faces: the rows of C_A⁻¹, on which A projects to [0, 1] and B's
    // origin, components and velocity project to p, C' (row j) and v.
    let (inv_a, comps_b) = (a.inv(), b.components());
    let mut p = [0.0; D];
    let mut v = [0.0; D];
    let mut rows = [[0.0; D]; D];
    for j in 0..D {
        p[j] = dot(&inv_a[j], &d);
        if MOVING {
            v[j] = dot(&inv_a[j], &vel);
        }
        rows[j] = std::array::from_fn(|l| dot(&inv_a[j], &comps_b[l]));
        if !w.axis::<MOVING>(UNIT, p[j], range(kb, &rows[j]), v[j]) {
            return None;
        }
    }
    if ka == FrameKind::Tetrahedron {
        // The face ΣXⱼ = 1, normal Σⱼ row j of C_A⁻¹.
        let sum: [f64; D] = std::array::from_fn(|l| rows.iter().map(|r| r[l]).sum());
        if !w.axis::<MOVING>(UNIT, p.iter().sum(), range(kb, &sum), v.iter().sum()) {
            return None;
        }
    }

    // B's faces: the rows of C_B⁻¹, on which B projects to [0, 1].
    let (inv_b, comps_a) = (b.inv(), a.components());
    let (mut sum_row, mut sum_off, mut sum_s) = ([0.0; D], 0.0, 0.0);
    for n in inv_b {
        let row: [f64; D] = std::array::from_fn(|i| dot(n, &comps_a[i]));
        let off = dot(n, &d);
        let s = if MOVING { dot(n, &vel) } else { 0.0 };
        if !w.axis::<MOVING>(range(ka, &row), off, UNIT, s) {
            return None;
        }
        for (acc, x) in sum_row.iter_mut().zip(row) {
            *acc += x;
        }
        sum_off += off;
        sum_s += s;
    }
    if kb == FrameKind::Tetrahedron && !w.axis::<MOVING>(range(ka, &sum_row), sum_off, UNIT, sum_s) {
        return None;
    }

    if D == 3 {
        // In A's local coordinates: B's components are the columns of C'.
        let rows = lift_matrix(&rows);
        let cb: [[f64; 3]; 3] = std::array::from_fn(|l| std::array::from_fn(|j| rows[j][l]));
        if !edge_pairs::<MOVING>(ka, kb, &lift(&p), &cb, &lift(&v), &mut w) {
            return None;
        }
    }
    Some(w)
}

/// `x` as a 3D vector (only called with `D == 3`).
#[inline(always)]
fn lift<const D: usize>(x: &[f64; D]) -> [f64; 3] {
    std::array::from_fn(|i| if i < D { x[i] } else { 0.0 })
}

/// `m` as a 3×3 matrix (only called with `D == 3`).
#[inline(always)]
fn lift_matrix<const D: usize>(m: &[[f64; D]; D]) -> [[f64; 3]; 3] {
    std::array::from_fn(|i| if i < D { lift(&m[i]) } else { [0.0; 3] })
}

/// The 3D edge-pair axes, in A's local coordinates: B has origin `p`,
/// components `cb` and velocity `v` relative to A, and A is the unit cube or
/// simplex. False when one of them separates over the whole step.
#[inline(always)]
fn edge_pairs<const MOVING: bool>(
    ka: FrameKind,
    kb: FrameKind,
    p: &[f64; 3],
    cb: &[[f64; 3]; 3],
    v: &[f64; 3],
    w: &mut Window,
) -> bool {
    let edges_b = [cb[0], cb[1], cb[2], sub(&cb[1], &cb[0]), sub(&cb[2], &cb[0]), sub(&cb[2], &cb[1])];
    let count_b = if kb == FrameKind::Tetrahedron { 6 } else { 3 };
    let count_a = if ka == FrameKind::Tetrahedron { 6 } else { 3 };
    for e in &edges_b[..count_b] {
        // eᵢ × e for A's edges e₀, e₁, e₂; the tetrahedron's other edges are
        // e₁ − e₀, e₂ − e₀, e₂ − e₁.
        let u = [[0.0, -e[2], e[1]], [e[2], 0.0, -e[0]], [-e[1], e[0], 0.0]];
        let axes = [u[0], u[1], u[2], sub(&u[1], &u[0]), sub(&u[2], &u[0]), sub(&u[2], &u[1])];
        let cutoff = DEGENERATE * dot(e, e);
        for (k, n) in axes[..count_a].iter().enumerate() {
            // |e_A|² is 1 for A's components and 2 for their differences.
            let edge_a2 = if k < 3 { 1.0 } else { 2.0 };
            if dot(n, n) <= cutoff * edge_a2 {
                continue;
            }
            // A's components are the unit vectors: they project to n itself.
            let xb = [dot(n, &cb[0]), dot(n, &cb[1]), dot(n, &cb[2])];
            let s = if MOVING { dot(n, v) } else { 0.0 };
            if !w.axis::<MOVING>(range(ka, n), dot(n, p), range(kb, &xb), s) {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Frame2, Frame3};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use FrameKind::{Cuboid as C, Tetrahedron as T};

    const I2: [[f64; 2]; 2] = [[1.0, 0.0], [0.0, 1.0]];
    const I3: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    /// The digest's 3D "B" components.
    const B3: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 1.0]];

    fn f<const D: usize>(kind: FrameKind, o: [f64; D], c: [[f64; D]; D]) -> Frame<D> {
        Frame::new(kind, o, c).unwrap()
    }

    /// Checks SAT in both orders against the expected verdict and FMB.
    fn expect<const D: usize>(case: &str, p: &Frame<D>, q: &Frame<D>, want: bool) {
        assert_eq!(overlaps(p, q), want, "{case}: (P, Q)");
        assert_eq!(overlaps(q, p), want, "{case}: (Q, P)");
        assert_eq!(crate::overlaps(p, q), want, "{case}: FMB");
    }

    #[test]
    fn digest_2d_static_cases() {
        let m = |a: f64, b: f64, c: f64, d: f64| [[a, b], [c, d]];
        let cases: [(Frame2, Frame2, bool); 22] = [
            (f(C, [0.0, 0.0], I2), f(C, [0.0, 0.0], I2), true),
            (f(C, [0.0, 0.0], I2), f(C, [0.5, 0.5], I2), true),
            (f(C, [-0.5, -0.5], I2), f(C, [0.5, 0.5], I2), false),
            (f(C, [0.0, 0.0], I2), f(C, [0.25, -0.25], m(0.5, 0.0, 0.0, 2.0)), true),
            (f(C, [0.0, 0.0], I2), f(C, [-0.25, 0.25], m(2.0, 0.0, 0.0, 0.5)), true),
            (f(C, [0.0, 0.0], m(1.0, 1.0, -1.0, 1.0)), f(C, [0.0, 0.0], I2), true),
            (f(C, [-0.5, -0.5], m(1.0, 1.0, -1.0, 1.0)), f(C, [0.0, 0.0], I2), true),
            (f(C, [1.5, 1.5], m(1.0, -1.0, -1.0, -1.0)), f(C, [1.0, 0.0], m(-1.0, 0.0, 0.0, 1.0)), true),
            (f(C, [1.0, 0.5], m(-0.5, 0.5, -0.5, -0.5)), f(C, [0.0, 1.0], m(1.0, 0.0, 0.0, -1.0)), true),
            (f(C, [0.0, 0.0], m(1.0, 0.0, 1.0, 1.0)), f(C, [2.0, -1.0], m(0.0, 1.0, -0.5, 1.0)), true),
            (f(C, [0.0, 0.0], m(1.0, 0.5, 0.5, 1.0)), f(C, [1.0, 1.0], m(-0.5, -0.5, 0.0, -1.0)), true),
            (f(C, [0.0, 0.0], m(1.0, 0.5, 0.5, 1.0)), f(C, [1.0, 2.0], m(-0.5, -0.5, 0.0, -1.0)), true),
            (f(T, [0.0, 0.0], m(1.0, 0.5, 0.5, 1.0)), f(C, [1.0, 2.0], m(-0.5, -0.5, 0.0, -1.0)), true),
            (f(C, [0.0, 0.0], m(1.0, 0.5, 0.5, 1.0)), f(T, [1.0, 2.0], m(-0.5, -0.5, 0.0, -1.0)), true),
            (f(C, [0.0, 0.0], I2), f(T, [0.0, 0.0], I2), true),
            (f(C, [0.0, 0.0], I2), f(T, [0.0, -0.5], I2), true),
            (f(C, [0.5, 0.5], m(-0.5, 0.0, 0.0, -0.5)), f(T, [0.0, -0.5], I2), true),
            (f(C, [0.5, 0.5], I2), f(T, [0.0, 0.0], I2), false),
            (f(C, [0.0, 0.0], I2), f(T, [1.5, 1.5], m(-1.5, 0.0, 0.0, -1.5)), true),
            (f(T, [0.0, 0.0], I2), f(T, [1.01, 1.01], m(-1.0, 0.0, 0.0, -1.0)), false),
            (f(T, [0.0, 0.0], m(1.0, 0.5, 0.5, 1.0)), f(T, [1.0, 1.0], m(-0.5, -0.5, 0.0, -1.0)), true),
            (f(T, [0.0, 0.0], m(1.0, 0.5, 0.5, 1.0)), f(T, [1.01, 1.5], m(-0.5, -0.5, 0.0, -1.0)), false),
        ];
        for (i, (p, q, want)) in cases.iter().enumerate() {
            expect(&format!("2D static #{}", i + 1), p, q, *want);
        }
    }

    #[test]
    fn digest_3d_static_cases() {
        let flip_z = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]];
        let flip_y = [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]];
        let minus = I3.map(|c| c.map(|x| -x));
        let cases: [(Frame3, Frame3, bool); 12] = [
            (f(C, [0.0; 3], I3), f(C, [0.0; 3], I3), true),
            (f(C, [0.0; 3], I3), f(C, [0.5; 3], I3), true),
            (f(C, [0.0; 3], I3), f(C, [-0.5; 3], I3), true),
            (f(C, [0.0; 3], I3), f(C, [1.5; 3], minus), true),
            (f(C, [0.0; 3], I3), f(C, [0.5, 1.5, -1.5], flip_y), false),
            (f(C, [0.0; 3], flip_z), f(C, [0.5, 1.5, -1.5], flip_y), true),
            (f(C, [-1.01; 3], B3), f(C, [0.0; 3], I3), false),
            (f(C, [-1.0; 3], B3), f(C, [0.0, -0.5, 0.0], I3), true),
            (f(T, [-1.0; 3], B3), f(C, [0.0, -0.5, 0.0], I3), false),
            (f(C, [-1.0; 3], B3), f(T, [0.0, -0.5, 0.0], I3), true),
            (f(T, [-1.0; 3], B3), f(T, [0.0, -0.5, 0.0], I3), false),
            (f(T, [-0.5, -1.0, -0.5], B3), f(T, [0.0, -0.5, 0.0], I3), true),
        ];
        for (i, (p, q, want)) in cases.iter().enumerate() {
            expect(&format!("3D static #{}", i + 1), p, q, *want);
        }
    }

    /// The digest's dynamic cases: Q (origin, components, velocity) against
    /// the static unit square, and the expected contact interval.
    type Dynamic = ([f64; 2], [[f64; 2]; 2], [f64; 2], Option<[f64; 2]>);
    const DYNAMIC: [Dynamic; 6] = [
        ([-1.0, 0.0], I2, [-1.0, 0.0], None),
        ([-1.01, -1.01], I2, [1.0, 0.0], None),
        ([-1.0, 0.0], I2, [1.0, 0.0], Some([0.0, 1.0])),
        ([-1.0, 0.25], [[0.5, 0.0], [0.0, 0.5]], [4.0, 0.0], Some([0.125, 0.5])),
        ([0.25, -1.0], [[0.5, 0.0], [0.0, 0.5]], [0.0, 4.0], Some([0.125, 0.5])),
        ([0.9, -1.0], [[0.5, 0.0], [0.0, 0.5]], [0.0, 4.0], Some([0.125, 0.5])),
    ];

    fn close(x: Option<[f64; 2]>, y: Option<[f64; 2]>, tol: f64) -> bool {
        match (x, y) {
            (Some(x), Some(y)) => (x[0] - y[0]).abs() <= tol && (x[1] - y[1]).abs() <= tol,
            (x, y) => x.is_none() && y.is_none(),
        }
    }

    fn expect_interval<const D: usize>(case: &str, p: &Frame<D>, q: &Frame<D>, want: Option<[f64; 2]>) {
        for (x, y, order) in [(p, q, "(P, Q)"), (q, p, "(Q, P)")] {
            let got = contact_interval(x, y);
            assert!(close(got, want, 1e-12), "{case} {order}: {got:?}, want {want:?}");
            assert_eq!(overlaps(x, y), want.is_some(), "{case} {order}");
        }
        let fmb = crate::intersect(p, q).map(|h| h.time);
        assert!(close(fmb, want, 1e-12), "{case} FMB: {fmb:?}, want {want:?}");
    }

    #[test]
    fn digest_dynamic_cases_2d_and_3d() {
        let p2 = f(C, [0.0; 2], I2);
        let p3 = f(C, [0.0; 3], I3);
        for (i, (o, c, v, want)) in DYNAMIC.into_iter().enumerate() {
            let q2 = f(C, o, c).with_velocity(v).unwrap();
            expect_interval(&format!("2D dynamic #{}", i + 1), &p2, &q2, want);
            let c3 = [[c[0][0], c[0][1], 0.0], [c[1][0], c[1][1], 0.0], [0.0, 0.0, 1.0]];
            let q3 = f(C, [o[0], o[1], 0.0], c3).with_velocity([v[0], v[1], 0.0]).unwrap();
            expect_interval(&format!("3D dynamic #{}", i + 1), &p3, &q3, want);
            // Both moving, same relative motion: the same interval.
            let shift = [0.5, -2.0, 3.0];
            let p3m = p3.with_velocity(shift).unwrap();
            let q3m = q3.with_velocity([v[0] + shift[0], v[1] + shift[1], shift[2]]).unwrap();
            expect_interval(&format!("3D dynamic #{} (both moving)", i + 1), &p3m, &q3m, want);
        }
    }

    #[test]
    fn touching_is_not_a_collision_at_any_scale_or_offset() {
        // Powers of two and offsets in units of the size keep the contacts exact.
        for scale in [2f64.powi(-20), 1.0, 2f64.powi(20)] {
            for offset in [0.0, 1e3, -7.5e5] {
                let g = |x: f64| (x + offset) * scale;
                let a = f(C, [g(0.0); 3], I3.map(|c| c.map(|x| x * scale)));
                // Face, edge and corner contact with a cube, a tetrahedron's
                // face against a face, and a tetrahedron's slanted face.
                let face = f(C, [g(1.0), g(0.0), g(0.0)], I3.map(|c| c.map(|x| x * scale)));
                let edge = f(C, [g(1.0), g(1.0), g(0.2)], I3.map(|c| c.map(|x| x * scale)));
                let corner = f(T, [g(1.0); 3], I3.map(|c| c.map(|x| x * scale)));
                let slant = f(C, [g(0.5), g(0.5), g(0.0)], I3.map(|c| c.map(|x| x * scale)));
                let tet = f(T, [g(0.0); 3], I3.map(|c| c.map(|x| x * scale)));
                for b in [&face, &edge, &corner] {
                    assert!(!overlaps(&a, b) && !overlaps(b, &a), "{scale} {offset}");
                }
                // `slant` starts on the plane x + y = 1 of `tet`.
                assert!(!overlaps(&tet, &slant) && !overlaps(&slant, &tet), "{scale} {offset}");
                // Overlapping by 1e-6 of the size is a collision.
                let deep = f(C, [g(1.0 - 1e-6), g(0.0), g(0.0)], I3.map(|c| c.map(|x| x * scale)));
                assert!(overlaps(&a, &deep) && overlaps(&deep, &a), "{scale} {offset}");
                // Touching at t = 1 exactly, or grazing along a face: no contact.
                let late = f(C, [g(2.0), g(0.0), g(0.0)], I3.map(|c| c.map(|x| x * scale)))
                    .with_velocity([-scale, 0.0, 0.0])
                    .unwrap();
                assert_eq!(contact_interval(&a, &late), None);
                assert_eq!(contact_interval(&late, &a), None);
                let graze = face.with_velocity([0.0, scale, 0.0]).unwrap();
                assert_eq!(contact_interval(&a, &graze), None);
            }
        }
    }

    #[test]
    fn equal_velocities_give_the_whole_step_iff_static_overlap() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut hits = 0;
        for _ in 0..2000 {
            let (a, b) = (random::<3>(&mut rng, false), random::<3>(&mut rng, false));
            let v = [rng.random_range(-100.0..100.0), rng.random_range(-100.0..100.0), rng.random_range(-100.0..100.0)];
            let (am, bm) = (a.with_velocity(v).unwrap(), b.with_velocity(v).unwrap());
            let want = overlaps(&a, &b).then_some([0.0, 1.0]);
            hits += usize::from(want.is_some());
            assert_eq!(contact_interval(&am, &bm), want);
        }
        assert!(hits > 100, "{hits}");
    }

    /// A frame as in the paper's generator: kind 50/50, every number uniform
    /// in [-100, 100], retried until the constructor accepts it.
    fn random<const D: usize>(rng: &mut ChaCha8Rng, moving: bool) -> Frame<D> {
        loop {
            let kind = if rng.random_bool(0.5) { C } else { T };
            let mut x = || rng.random_range(-100.0..=100.0);
            let o: [f64; D] = std::array::from_fn(|_| x());
            let c: [[f64; D]; D] = std::array::from_fn(|_| std::array::from_fn(|_| x()));
            let v: [f64; D] = std::array::from_fn(|_| if moving { x() } else { 0.0 });
            if let Ok(frame) = Frame::new(kind, o, c) {
                return frame.with_velocity(v).unwrap();
            }
        }
    }

    fn magnitude<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> f64 {
        [a, b]
            .iter()
            .flat_map(|fr| fr.origin().into_iter().chain(fr.components().into_iter().flatten()).chain(fr.velocity()))
            .fold(0.0, |m, x| m.max(x.abs()))
    }

    /// `b` with its origin moved by `delta` times each of the 3^D − 1
    /// directions of {-1, 0, 1}^D.
    fn nudged<const D: usize>(b: &Frame<D>, delta: f64) -> impl Iterator<Item = Frame<D>> + '_ {
        (0..3usize.pow(D as u32)).filter(|&m| m != (3usize.pow(D as u32) - 1) / 2).map(move |m| {
            let mut o = b.origin();
            let mut code = m;
            for x in &mut o {
                *x += delta * ((code % 3) as f64 - 1.0);
                code /= 3;
            }
            Frame::new(b.kind(), o, b.components()).unwrap().with_velocity(b.velocity()).unwrap()
        })
    }

    /// True when moving `b` by `rel` times the pair's magnitude changes SAT's verdict.
    fn flips<const D: usize>(a: &Frame<D>, b: &Frame<D>, rel: f64) -> bool {
        let verdict = overlaps(a, b);
        nudged(b, rel * magnitude(a, b)).any(|bb| overlaps(a, &bb) != verdict)
    }

    /// True when SAT's contact interval moves past `t` (within 1e-9) for
    /// some nudge of `b` by `rel` times the pair's magnitude.
    fn interval_spans<const D: usize>(a: &Frame<D>, b: &Frame<D>, rel: f64, t: [f64; 2]) -> bool {
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for bb in nudged(b, rel * magnitude(a, b)) {
            if let Some(s) = contact_interval(a, &bb) {
                for k in 0..2 {
                    lo[k] = lo[k].min(s[k]);
                    hi[k] = hi[k].max(s[k]);
                }
            }
        }
        (0..2).all(|k| lo[k] - 1e-9 <= t[k] && t[k] <= hi[k] + 1e-9)
    }

    /// FMB's verdict and contact interval, or `None` (and the pair, in
    /// `report`) when FMB panics.
    fn fmb_or_report<const D: usize>(
        a: &Frame<D>,
        b: &Frame<D>,
        report: &mut Vec<String>,
    ) -> Option<(bool, Option<[f64; 2]>)> {
        let (a, b) = (*a, *b);
        let run = move || (crate::overlaps(&a, &b), crate::intersect(&a, &b).map(|h| h.time));
        let result = std::panic::catch_unwind(run).ok();
        if result.is_none() {
            report.push(format!("FMB panicked\n  a = {a:?}\n  b = {b:?}"));
        }
        result
    }

    /// A thin frame: its last component is nearly parallel to the first
    /// (Hadamard ratio down to about 1e-5).
    fn thin<const D: usize>(rng: &mut ChaCha8Rng, moving: bool) -> Frame<D> {
        loop {
            let f = random::<D>(rng, moving);
            let mut c = f.components();
            let t = 10f64.powf(rng.random_range(-5.0..-1.0));
            c[D - 1] = std::array::from_fn(|k| c[0][k] * rng.random_range(-2.0..2.0) + t * c[D - 1][k]);
            if let Ok(g) = Frame::new(f.kind(), f.origin(), c) {
                return g.with_velocity(f.velocity()).unwrap();
            }
        }
    }

    /// A frame on a coarse lattice (small integers, halves for the origin):
    /// exact touching, shared faces and parallel edges are common.
    fn lattice<const D: usize>(rng: &mut ChaCha8Rng, moving: bool) -> Frame<D> {
        loop {
            let kind = if rng.random_bool(0.5) { C } else { T };
            let o: [f64; D] = std::array::from_fn(|_| f64::from(rng.random_range(-4i32..=4)) * 0.5);
            let c: [[f64; D]; D] =
                std::array::from_fn(|_| std::array::from_fn(|_| f64::from(rng.random_range(-2i32..=2))));
            let v: [f64; D] =
                std::array::from_fn(|_| if moving { f64::from(rng.random_range(-3i32..=3)) } else { 0.0 });
            if let Ok(frame) = Frame::new(kind, o, c) {
                return frame.with_velocity(v).unwrap();
            }
        }
    }

    /// Lattice pairs must agree exactly (no near-touching allowance): the
    /// touching policies of SAT and FMB are the same.
    fn agree_on_lattice<const D: usize>(seed: u64, pairs: usize, moving: bool) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut hits, mut touching, mut bad) = (0, 0, Vec::new());
        for _ in 0..pairs {
            let (a, b) = (lattice::<D>(&mut rng, moving), lattice::<D>(&mut rng, moving));
            let Some((_, fmb)) = fmb_or_report(&a, &b, &mut bad) else { continue };
            hits += usize::from(fmb.is_some());
            touching += usize::from(fmb.is_none() && flips(&a, &b, 1e-9));
            for (x, y) in [(&a, &b), (&b, &a)] {
                let sat = contact_interval(x, y);
                if !close(sat, fmb, 1e-12) {
                    bad.push(format!("sat {sat:?} fmb {fmb:?}\n  a = {x:?}\n  b = {y:?}"));
                }
            }
        }
        println!(
            "{D}D lattice moving={moving}: {pairs} pairs, {hits} hits, {touching} touching, {} disagreements",
            bad.len()
        );
        assert!(bad.is_empty(), "{} disagreements:\n{}", bad.len(), bad[..bad.len().min(5)].join("\n"));
        assert!(hits > pairs / 20 && touching > pairs / 50, "{hits} hits, {touching} touching");
    }

    #[test]
    fn agrees_with_fmb_on_thin_frames() {
        for (d, moving, tally) in [
            (2, false, agree_with::<2>(51, 20_000, false, thin::<2>)),
            (2, true, agree_with::<2>(52, 20_000, true, thin::<2>)),
            (3, false, agree_with::<3>(53, 20_000, false, thin::<3>)),
            (3, true, agree_with::<3>(54, 20_000, true, thin::<3>)),
        ] {
            assert!(tally.disagreements.is_empty(), "{d}D moving={moving}:\n{}", tally.disagreements.join("\n"));
        }
    }

    #[test]
    fn agrees_with_fmb_on_lattice_frames() {
        agree_on_lattice::<2>(21, 20_000, false);
        agree_on_lattice::<2>(22, 20_000, true);
        agree_on_lattice::<3>(23, 20_000, false);
        agree_on_lattice::<3>(24, 20_000, true);
    }

    #[derive(Debug, Default)]
    struct Tally {
        pairs: usize,
        hits: usize,
        near_1e9: usize,
        near_1e7: usize,
        interval_checked: usize,
        interval_near: usize,
        disagreements: Vec<String>,
    }

    /// Random pairs against FMB: the verdict in both orders, and the contact
    /// interval against `intersect`'s.
    fn agree<const D: usize>(seed: u64, pairs: usize, moving: bool) -> Tally {
        agree_with::<D>(seed, pairs, moving, random::<D>)
    }

    fn agree_with<const D: usize>(
        seed: u64,
        pairs: usize,
        moving: bool,
        make: fn(&mut ChaCha8Rng, bool) -> Frame<D>,
    ) -> Tally {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut tally = Tally::default();
        while tally.pairs < pairs {
            let (a, b) = (make(&mut rng, moving), make(&mut rng, moving));
            tally.pairs += 1;
            let Some((fmb, fmb_time)) = fmb_or_report(&a, &b, &mut tally.disagreements) else { continue };
            tally.hits += usize::from(fmb);
            for (x, y) in [(&a, &b), (&b, &a)] {
                let sat = contact_interval(x, y);
                if sat.is_some() != fmb {
                    if flips(x, y, 1e-9) {
                        tally.near_1e9 += 1;
                    } else if flips(x, y, 1e-7) {
                        tally.near_1e7 += 1;
                    } else {
                        tally
                            .disagreements
                            .push(format!("verdict: sat {sat:?} fmb {fmb_time:?}\n  a = {x:?}\n  b = {y:?}"));
                    }
                    continue;
                }
                if let (Some(s), Some(t)) = (sat, fmb_time) {
                    tally.interval_checked += 1;
                    if !close(Some(s), Some(t), 1e-9) {
                        if interval_spans(x, y, 1e-7, t) {
                            tally.interval_near += 1;
                        } else {
                            tally
                                .disagreements
                                .push(format!("interval: sat {s:?} fmb {t:?}\n  a = {x:?}\n  b = {y:?}"));
                        }
                    }
                }
            }
        }
        println!("{D}D moving={moving}: {tally:?}");
        tally
    }

    fn check_agreement<const D: usize>(seed: u64, moving: bool) {
        let tally = agree::<D>(seed, 25_000, moving);
        assert!(
            tally.disagreements.is_empty(),
            "{} disagreements:\n{}",
            tally.disagreements.len(),
            tally.disagreements.join("\n")
        );
        assert!(tally.hits > 1000, "{tally:?}");
    }

    #[test]
    fn agrees_with_fmb_2d_static() {
        check_agreement::<2>(1, false);
    }

    #[test]
    fn agrees_with_fmb_2d_moving() {
        check_agreement::<2>(2, true);
    }

    #[test]
    fn agrees_with_fmb_3d_static() {
        check_agreement::<3>(3, false);
    }

    #[test]
    fn agrees_with_fmb_3d_moving() {
        check_agreement::<3>(4, true);
    }

    /// The same with a million pairs per case (`cargo test --release --lib
    /// sat::tests::soak -- --ignored --nocapture`, about a minute).
    #[test]
    #[ignore = "long"]
    fn soak_agreement_with_fmb() {
        for (seed, moving) in [(101, false), (102, true)] {
            for (d, tally) in [(2, agree::<2>(seed, 1_000_000, moving)), (3, agree::<3>(seed + 10, 1_000_000, moving))]
            {
                assert!(tally.disagreements.is_empty(), "{d}D:\n{}", tally.disagreements.join("\n"));
            }
            agree_on_lattice::<2>(seed + 20, 1_000_000, moving);
            agree_on_lattice::<3>(seed + 30, 1_000_000, moving);
        }
    }

    /// A random oriented box as a parry pose and cuboid, and as a frame.
    fn obb(rng: &mut ChaCha8Rng, spread: f64) -> (Frame3, parry3d_f64::math::Pose, parry3d_f64::shape::Cuboid) {
        use parry3d_f64::math::{Pose, Vector};
        let mut x = |lo: f64, hi: f64| rng.random_range(lo..hi);
        let center = [x(-spread, spread), x(-spread, spread), x(-spread, spread)];
        let half = [x(0.5, 5.0), x(0.5, 5.0), x(0.5, 5.0)];
        let pi = std::f64::consts::PI;
        let pose = Pose::new(Vector::from(center), Vector::new(x(-pi, pi), x(-pi, pi), x(-pi, pi)));
        let axes = [Vector::X, Vector::Y, Vector::Z].map(|e| pose.rotation * e).map(|a| [a.x, a.y, a.z]);
        let frame = Frame3::oriented_box(center, half, axes).unwrap();
        (frame, pose, parry3d_f64::shape::Cuboid::new(Vector::from(half)))
    }

    /// Random oriented boxes against parry's cuboid SAT, which shares no
    /// code with this crate (parry counts touching as intersecting, so
    /// near-touching pairs are left out as above).
    #[test]
    fn agrees_with_parry_on_oriented_boxes() {
        let mut rng = ChaCha8Rng::seed_from_u64(31);
        let (mut hits, mut near, mut bad) = (0, 0, Vec::new());
        for _ in 0..20_000 {
            let ((fa, pa, ca), (fb, pb, cb)) = (obb(&mut rng, 6.0), obb(&mut rng, 6.0));
            let parry = parry3d_f64::query::intersection_test(&pa, &ca, &pb, &cb).unwrap().intersecting;
            hits += usize::from(parry);
            for (x, y) in [(&fa, &fb), (&fb, &fa)] {
                if overlaps(x, y) != parry {
                    if flips(x, y, 1e-9) {
                        near += 1;
                    } else {
                        bad.push(format!("parry {parry}\n  a = {x:?}\n  b = {y:?}"));
                    }
                }
            }
        }
        println!("oriented boxes: 20000 pairs, {hits} hits, {near} near touching, {} disagreements", bad.len());
        assert!(bad.is_empty(), "{}", bad.join("\n"));
        assert!(hits > 2000, "{hits}");
    }

    /// Boxes whose edges are nearly parallel (rotated by 1e-17 to 1e-6 rad):
    /// the edge-pair axes are then round-off, and must not invent a
    /// separation (the digest's false separations of Gottschalk's test
    /// without ε) nor miss one.
    #[test]
    fn nearly_parallel_boxes_are_judged_right() {
        let mut rng = ChaCha8Rng::seed_from_u64(61);
        for _ in 0..20_000 {
            let (a, _, _) = obb(&mut rng, 1e3);
            let axes = a.components().map(|c| c.map(|x| x / crate::math::norm(&c)));
            let half: [f64; 3] = std::array::from_fn(|i| 0.5 * crate::math::norm(&a.components()[i]));
            let center: [f64; 3] =
                std::array::from_fn(|k| a.origin()[k] + (0..3).map(|i| 0.5 * a.components()[i][k]).sum::<f64>());
            // Rodrigues' rotation by a tiny angle about a random unit axis.
            let k = {
                let v = [rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)];
                v.map(|x| x / crate::math::norm(&v))
            };
            let angle = 10f64.powf(rng.random_range(-17.0..-6.0));
            let turn = |v: [f64; 3]| -> [f64; 3] {
                let kxv = crate::math::cross(&k, &v);
                let kv = dot(&k, &v);
                std::array::from_fn(|i| v[i] * angle.cos() + kxv[i] * angle.sin() + k[i] * kv * (1.0 - angle.cos()))
            };
            let turned = axes.map(turn);
            let scale: [f64; 3] = std::array::from_fn(|_| rng.random_range(0.3..1.5));
            let half_b: [f64; 3] = std::array::from_fn(|i| half[i] * scale[i]);
            // Deep overlap: centres within a tenth of the smaller box.
            let shift: [f64; 3] = std::array::from_fn(|_| rng.random_range(-0.1..0.1));
            let near_center: [f64; 3] = std::array::from_fn(|k| {
                center[k] + (0..3).map(|i| shift[i] * half_b[i].min(half[i]) * axes[i][k]).sum::<f64>()
            });
            let deep = Frame3::oriented_box(near_center, half_b, turned).unwrap();
            assert!(overlaps(&a, &deep) && overlaps(&deep, &a), "{a:?}\n{deep:?}");
            // Clear separation along one of A's face normals, by 1e-3 of the size.
            let i = rng.random_range(0..3usize);
            let gap = half[i] + half_b[i] * 1.01 + 1e-3 * half[i];
            let far_center: [f64; 3] = std::array::from_fn(|k| center[k] + gap * axes[i][k]);
            let far = Frame3::oriented_box(far_center, half_b, turned).unwrap();
            assert!(!overlaps(&a, &far) && !overlaps(&far, &a), "{a:?}\n{far:?}");
            assert!(crate::overlaps(&a, &deep) && !crate::overlaps(&a, &far));
        }
    }

    /// Rough timings, nanoseconds per ordered pair (`cargo test --release --lib
    /// sat::tests::timing -- --ignored --nocapture`).
    #[test]
    #[ignore = "timing, not a test"]
    fn timing() {
        use std::hint::black_box;
        use std::time::Instant;
        fn time<P>(pairs: &[P], test: impl Fn(&P) -> bool) -> (f64, usize) {
            let mut best = f64::INFINITY;
            let mut hits = 0;
            for _ in 0..15 {
                let start = Instant::now();
                hits = pairs.iter().filter(|p| test(black_box(p))).count();
                best = best.min(start.elapsed().as_secs_f64() * 1e9 / pairs.len() as f64);
            }
            (best, hits)
        }
        let mut rng = ChaCha8Rng::seed_from_u64(41);
        for spread in [3.0, 6.0, 12.0] {
            let boxes: Vec<_> = (0..20_000).map(|_| (obb(&mut rng, spread), obb(&mut rng, spread))).collect();
            let frames: Vec<_> = boxes.iter().map(|(a, b)| (a.0, b.0)).collect();
            let (sat_ns, sat_hits) = time(&frames, |(a, b)| overlaps(a, b));
            let (fmb_ns, fmb_hits) = time(&frames, |(a, b)| crate::overlaps(a, b));
            let (parry_ns, parry_hits) = time(&boxes, |((_, pa, ca), (_, pb, cb))| {
                parry3d_f64::query::intersection_test(pa, ca, pb, cb).unwrap().intersecting
            });
            println!(
                "OBB spread {spread}: sat {sat_ns:.1} ns ({sat_hits} hits), parry {parry_ns:.1} ns ({parry_hits}), fmb {fmb_ns:.1} ns ({fmb_hits})"
            );
        }
        for (dim3, moving) in [(false, false), (false, true), (true, false), (true, true)] {
            for (ka, kb) in [(C, C), (C, T), (T, T)] {
                let make3 = |rng: &mut ChaCha8Rng, kind| loop {
                    let f: Frame3 = random(rng, moving);
                    if f.kind() == kind {
                        break f;
                    }
                };
                let make2 = |rng: &mut ChaCha8Rng, kind| loop {
                    let f: Frame2 = random(rng, moving);
                    if f.kind() == kind {
                        break f;
                    }
                };
                let (sat_ns, fmb_ns, hits) = if dim3 {
                    let ps: Vec<_> = (0..20_000).map(|_| (make3(&mut rng, ka), make3(&mut rng, kb))).collect();
                    let (s, h) = time(&ps, |(a, b)| overlaps(a, b));
                    (s, time(&ps, |(a, b)| crate::overlaps(a, b)).0, h)
                } else {
                    let ps: Vec<_> = (0..20_000).map(|_| (make2(&mut rng, ka), make2(&mut rng, kb))).collect();
                    let (s, h) = time(&ps, |(a, b)| overlaps(a, b));
                    (s, time(&ps, |(a, b)| crate::overlaps(a, b)).0, h)
                };
                let d = if dim3 { 3 } else { 2 };
                println!(
                    "paper generator {d}D moving={moving} {ka:?}-{kb:?}: sat {sat_ns:.1} ns, fmb {fmb_ns:.1} ns, {hits} hits / 20000"
                );
            }
        }
    }
}
