//! A ray against a frame: the first point of the frame on the ray, and the
//! outward normal of the face it enters through.
//!
//! Along the ray `p(s) = origin + s · dir`, the frame's local coordinates
//! `X(s) = C⁻¹ (p(s) − O)` are affine in `s`, and the frame is the set
//! `0 ≤ Xᵢ ≤ 1` (parallelepiped) or `Xᵢ ≥ 0, Σ Xᵢ ≤ 1` (simplex): a
//! Liang–Barsky clip of `s ∈ [0, max]` by `D` to `2D` half-lines. The face
//! of the last constraint to admit the ray is the one it enters through.

use crate::error::FrameError;
use crate::frame::{Frame, FrameKind, MAX_COORDINATE, check_coords};
use crate::math::{dot, mul_rows, sub};

/// Where a ray meets a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit<const D: usize> {
    /// The ray parameter of the first point of the frame: the point is
    /// `origin + time · dir` (a distance when `dir` is a unit vector); `0`
    /// when the ray starts in the frame.
    pub time: f64,
    /// Unit outward normal of the face the ray enters through; zero when
    /// the ray starts in the frame.
    pub normal: [f64; D],
}

/// The first point of frame `f` (at rest: its velocity is ignored) on the
/// ray `origin + s · dir`, `0 ≤ s ≤ max_time`, or `None` when the ray
/// misses it. The frame is closed: a ray that touches a face, an edge or
/// a vertex hits it there; one that starts inside (or on the boundary)
/// hits at `0`, whatever its direction (a zero direction too).
///
/// # Errors
/// [`FrameError::NonFinite`] or [`FrameError::TooLarge`] for an origin or
/// a direction that is not finite within ±1e15;
/// [`FrameError::BadRayLength`] for a `max_time` that is not a number in
/// `[0, 1e15]`.
///
/// ```
/// use fmbgrid::{Frame2, query::ray_cast};
/// let f = Frame2::from_aabb([2.0, -1.0], [3.0, 1.0])?;
/// let hit = ray_cast(&f, [0.0, 0.0], [1.0, 0.0], 10.0)?.unwrap();
/// assert_eq!((hit.time, hit.normal), (2.0, [-1.0, 0.0]));
/// assert!(ray_cast(&f, [0.0, 0.0], [1.0, 0.0], 1.5)?.is_none()); // too short
/// assert!(ray_cast(&f, [0.0, 0.0], [-1.0, 0.0], 10.0)?.is_none()); // away
/// assert!(ray_cast(&f, [f64::NAN, 0.0], [1.0, 0.0], 10.0).is_err());
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
pub fn ray_cast<const D: usize>(
    f: &Frame<D>,
    origin: [f64; D],
    dir: [f64; D],
    max_time: f64,
) -> Result<Option<RayHit<D>>, FrameError> {
    check_coords("ray origin", &origin)?;
    check_coords("ray direction", &dir)?;
    if !(0.0..=MAX_COORDINATE).contains(&max_time) {
        return Err(FrameError::BadRayLength { value: max_time });
    }
    Ok(cast(f, origin, dir, max_time))
}

/// [`ray_cast`] on numbers already checked (the world's rays).
pub(crate) fn cast<const D: usize>(f: &Frame<D>, origin: [f64; D], dir: [f64; D], max_time: f64) -> Option<RayHit<D>> {
    let () = Frame::<D>::SUPPORTED;
    let inv = f.inv();
    let x0 = mul_rows(inv, &sub(&origin, &f.origin()));
    let dx = mul_rows(inv, &dir);
    let (mut lo, mut hi) = (0.0_f64, max_time);
    // The constraint that set `lo`: its outward normal (unnormalised).
    let mut entry: Option<[f64; D]> = None;
    // Constraint `c + s · e ≥ 0` with outward normal `out`.
    let mut clip = |c: f64, e: f64, out: [f64; D]| -> bool {
        if e == 0.0 {
            return c >= 0.0;
        }
        let s = -c / e;
        if e > 0.0 {
            if s > lo {
                lo = s;
                entry = Some(out);
            }
        } else if s < hi {
            hi = s;
        }
        lo <= hi
    };
    let neg = |n: &[f64; D]| n.map(|x| -x);
    for k in 0..D {
        if !clip(x0[k], dx[k], neg(&inv[k])) {
            return None;
        }
        if f.kind() == FrameKind::Cuboid && !clip(1.0 - x0[k], -dx[k], inv[k]) {
            return None;
        }
    }
    if f.kind() == FrameKind::Tetrahedron {
        let sum: [f64; D] = std::array::from_fn(|j| inv.iter().map(|row| row[j]).sum());
        if !clip(1.0 - x0.iter().sum::<f64>(), -dx.iter().sum::<f64>(), sum) {
            return None;
        }
    }
    let normal = entry.map_or([0.0; D], |n| {
        let len = dot(&n, &n).sqrt();
        n.map(|x| x / len)
    });
    Some(RayHit { time: lo, normal })
}
