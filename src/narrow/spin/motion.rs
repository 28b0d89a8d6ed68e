//! The motion of a turning frame: a [`Spin`] about a pivot that moves with
//! the frame, the frame at any instant, and its swept box over the step.

use crate::error::FrameError;
use crate::frame::Frame;
use crate::math::{dot, sub};

/// A rotation at a constant rate over the step about a pivot that moves
/// with the frame: at instant `t ∈ [0, 1]` of the step, a point `y` of
/// the frame as given (at `t = 0`) is at `pivot + t·v + R(t·ω)·(y −
/// pivot)`, `v` the frame's velocity, `R(θ)` the rotation by the angle
/// `|θ|` about `θ`'s direction (2D: by the angle `θ`). Build one
/// with [`Spin::<2>::new`](Spin#impl-Spin<2>) (an angle per step) or
/// [`Spin::<3>::new`](Spin#impl-Spin<3>) (a rotation vector per step:
/// axis times angle).
///
/// ```
/// use fmbgrid::{Frame2, Spin};
/// // A unit square turning a quarter turn about its centre over the step.
/// let square = Frame2::from_aabb([-0.5, -0.5], [0.5, 0.5])?;
/// let spin = Spin::<2>::new([0.0, 0.0], std::f64::consts::FRAC_PI_2)?;
/// let half_way = spin.frame_at(&square, 0.5)?; // turned by 45°
/// assert!((half_way.aabb().max[0] - 0.5f64.sqrt()).abs() < 1e-12);
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spin<const D: usize> {
    pub(super) pivot: [f64; D],
    /// The rotation over the whole step as a rotation vector (2D: only the
    /// last coordinate, about the axis out of the plane).
    pub(super) rate: [f64; 3],
}

impl Spin<2> {
    /// A turn by `angle` radians over the step (counter-clockwise when
    /// positive) about `pivot` (where the pivot is at `t = 0`).
    ///
    /// # Errors
    /// [`FrameError::NonFinite`] or [`FrameError::TooLarge`] for a pivot or
    /// an angle that is not a finite number within ±1e15.
    ///
    /// ```
    /// use fmbgrid::Spin;
    /// assert!(Spin::<2>::new([0.0; 2], f64::NAN).is_err());
    /// ```
    pub fn new(pivot: [f64; 2], angle: f64) -> Result<Self, FrameError> {
        check("spin pivot", &pivot)?;
        check("spin angle", &[angle])?;
        Ok(Spin { pivot, rate: [0.0, 0.0, angle] })
    }
}

impl Spin<3> {
    /// A turn by `|rotation|` radians over the step about the axis along
    /// `rotation` (right-handed) through `pivot` (where the pivot is at
    /// `t = 0`).
    ///
    /// # Errors
    /// [`FrameError::NonFinite`] or [`FrameError::TooLarge`] for a pivot or
    /// a rotation that is not finite within ±1e15.
    ///
    /// ```
    /// use fmbgrid::{Frame3, Spin};
    /// let spin = Spin::<3>::new([0.0; 3], [0.0, 0.0, std::f64::consts::PI])?; // half a turn about z
    /// let f = spin.frame_at(&Frame3::from_aabb([1.0, 0.0, 0.0], [2.0, 1.0, 1.0])?, 1.0)?;
    /// assert!((f.aabb().min[0] + 2.0).abs() < 1e-12);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn new(pivot: [f64; 3], rotation: [f64; 3]) -> Result<Self, FrameError> {
        check("spin pivot", &pivot)?;
        check("spin rotation", &rotation)?;
        Ok(Spin { pivot, rate: rotation })
    }
}

impl<const D: usize> Spin<D> {
    /// A spin from its parts, already checked (the world's: a body's
    /// reference point and its angular velocity times the time step).
    pub(crate) fn from_parts(pivot: [f64; D], rate: [f64; 3]) -> Self {
        Spin { pivot, rate }
    }

    /// The pivot, where it is at the start of the step.
    ///
    /// ```
    /// use fmbgrid::Spin;
    /// assert_eq!(Spin::<2>::new([1.0, 2.0], 0.5)?.pivot(), [1.0, 2.0]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn pivot(&self) -> [f64; D] {
        self.pivot
    }

    /// The turn over the whole step as a rotation vector (axis times
    /// angle; 2D: `[0, 0, angle]`).
    ///
    /// ```
    /// use fmbgrid::Spin;
    /// assert_eq!(Spin::<2>::new([0.0; 2], 0.5)?.rotation(), [0.0, 0.0, 0.5]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn rotation(&self) -> [f64; 3] {
        self.rate
    }

    /// The turn's angle over the whole step, radians.
    ///
    /// ```
    /// use fmbgrid::Spin;
    /// assert_eq!(Spin::<3>::new([0.0; 3], [0.0, 3.0, 4.0])?.angle(), 5.0);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn angle(&self) -> f64 {
        dot(&self.rate, &self.rate).sqrt()
    }

    /// `f` (moving by its velocity) where it is at instant `t` of the step
    /// under this spin, at rest: the exact pose of the motion model.
    ///
    /// # Errors
    /// The frame's errors, for a pose the frame cannot take (beyond the
    /// range rule).
    ///
    /// ```
    /// use fmbgrid::{Frame2, Spin};
    /// let f = Frame2::from_aabb([1.0, -0.5], [2.0, 0.5])?.with_velocity([0.0, 3.0])?;
    /// let spin = Spin::<2>::new([0.0, 0.0], std::f64::consts::PI)?;
    /// let end = spin.frame_at(&f, 1.0)?; // turned half a turn about the pivot, which moved by 3 along y
    /// assert!((end.aabb().min[0] + 2.0).abs() < 1e-12 && (end.aabb().max[1] - 3.5).abs() < 1e-12);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn frame_at(&self, f: &Frame<D>, t: f64) -> Result<Frame<D>, FrameError> {
        let origin = if self.is_still() {
            // Not through the pivot: `pivot + (o − pivot)` is not `o`.
            std::array::from_fn(|k| f.origin()[k] + t * f.velocity()[k])
        } else {
            self.carry(&f.origin(), &f.velocity(), t)
        };
        let turn = self.matrix(t);
        Frame::new(f.kind(), origin, f.components().map(|c| apply(&turn, &c)))
    }

    /// True when the spin turns by no angle.
    pub(crate) fn is_still(&self) -> bool {
        self.rate == [0.0; 3]
    }

    /// `v` turned by `R(t·ω)` (as [`Spin::frame_at`] turns a frame's
    /// components, bit for bit).
    pub(crate) fn rotate(&self, v: &[f64; D], t: f64) -> [f64; D] {
        apply(&self.matrix(t), v)
    }

    /// The rotation `R(t·ω)` as a matrix of rows, for turning many vectors
    /// by the same angle (one `sin_cos` for all of them).
    pub(super) fn matrix(&self, t: f64) -> [[f64; D]; D] {
        if D == 2 {
            let (s, c) = (t * self.rate[2]).sin_cos();
            return std::array::from_fn(|k| std::array::from_fn(|j| [[c, -s], [s, c]][k][j]));
        }
        let n = self.angle();
        if n == 0.0 {
            return std::array::from_fn(|k| std::array::from_fn(|j| if j == k { 1.0 } else { 0.0 }));
        }
        // Rodrigues: R = cos·I + sin·[u]× + (1 − cos)·u uᵀ.
        let (s, c) = (t * n).sin_cos();
        let u: [f64; 3] = self.rate.map(|x| x / n);
        let cross = [[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]];
        std::array::from_fn(|k| {
            std::array::from_fn(|j| (if j == k { c } else { 0.0 }) + s * cross[k][j] + (1.0 - c) * u[k] * u[j])
        })
    }

    /// Where `point` (of the frame as given, at `t = 0`) is at instant `t`.
    pub(super) fn carry(&self, point: &[f64; D], velocity: &[f64; D], t: f64) -> [f64; D] {
        let arm = apply(&self.matrix(t), &sub(point, &self.pivot));
        std::array::from_fn(|k| self.pivot[k] + t * velocity[k] + arm[k])
    }
}

/// Point `q` (relative to the pivot) turned by `θ` about the spin's axis,
/// per coordinate as `a + A·cos θ + B·sin θ`: `a` the part along the axis,
/// `A` the part across it, `B` the axis crossed with `A` (2D: the axis out
/// of the plane). No turn: the point itself.
pub(super) fn arc<const D: usize>(spin: &Spin<D>, q: &[f64; D]) -> [[f64; 3]; D] {
    let n = spin.angle();
    if n == 0.0 {
        return std::array::from_fn(|k| [q[k], 0.0, 0.0]);
    }
    if D == 2 {
        let across = [-q[1], q[0]];
        return std::array::from_fn(|k| [0.0, q[k], across[k]]);
    }
    let u: [f64; D] = std::array::from_fn(|k| spin.rate[k] / n);
    let along = dot(q, &u);
    let w: [f64; D] = std::array::from_fn(|k| q[k] - along * u[k]);
    std::array::from_fn(|k| {
        let (i, j) = ((k + 1) % 3, (k + 2) % 3);
        [along * u[k], w[k], u[i] * w[j] - u[j] * w[i]]
    })
}

/// `m · v` for a matrix of rows.
pub(super) fn apply<const D: usize>(m: &[[f64; D]; D], v: &[f64; D]) -> [f64; D] {
    std::array::from_fn(|k| dot(&m[k], v))
}

pub(super) fn check<const N: usize>(what: &'static str, v: &[f64; N]) -> Result<(), FrameError> {
    for &value in v {
        if !value.is_finite() {
            return Err(FrameError::NonFinite { what, value });
        }
        if value.abs() > crate::frame::MAX_COORDINATE {
            return Err(FrameError::TooLarge { what, value, limit: crate::frame::MAX_COORDINATE });
        }
    }
    Ok(())
}
