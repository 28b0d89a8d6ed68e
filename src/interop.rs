//! Conversions from and to [`mint`] types (the `mint` feature): the
//! interchange types that glam, nalgebra, cgmath and most Rust math crates
//! convert to and from, so one set of conversions serves them all.
//!
//! Points, vectors and components are plain arrays in this crate, and
//! mint already converts its vectors and points to and from arrays: pass
//! `v.into()` wherever a `[f64; D]` is expected. What mint adds is poses:
//! a rotation as a quaternion or a matrix, and the homogeneous matrix a
//! renderer wants.
//!
//! ```
//! use fmbgrid::{Frame3, Pose3};
//! use mint::{Point3, Quaternion, Vector3};
//! let corner: Point3<f64> = [1.0, 2.0, 3.0].into(); // e.g. from glam's DVec3
//! let f = Frame3::from_aabb(corner.into(), [2.0, 3.0, 4.0])?;
//! // A quarter turn about z: (v sin(θ/2), cos(θ/2)).
//! let s = std::f64::consts::FRAC_1_SQRT_2;
//! let q = Quaternion { v: Vector3 { x: 0.0, y: 0.0, z: s }, s };
//! let pose = Pose3::from_mint(q, [0.0, 0.0, 5.0])?;
//! let m: mint::ColumnMatrix4<f64> = pose.into(); // for a renderer
//! assert_eq!(m.w.z, 5.0);
//! assert_eq!(Pose3::try_from(m)?, pose);
//! # let _ = f;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use mint::{ColumnMatrix3, ColumnMatrix4, Quaternion, Vector2, Vector3, Vector4};

use crate::error::WorldError;
use crate::world::Pose;

impl Pose<3> {
    /// The rotation `rotation` (a quaternion, normalised here), then the
    /// translation.
    ///
    /// # Errors
    /// [`WorldError::BadNumber`] for a non-finite number or a zero
    /// quaternion (no rotation).
    ///
    /// ```
    /// use fmbgrid::Pose3;
    /// use mint::{Quaternion, Vector3};
    /// let half_turn = Quaternion { v: Vector3 { x: 1.0, y: 0.0, z: 0.0 }, s: 0.0 };
    /// let p = Pose3::from_mint(half_turn, [0.0; 3])?;
    /// assert_eq!(p.transform_point(&[0.0, 1.0, 0.0]), [0.0, -1.0, 0.0]);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn from_mint(
        rotation: impl Into<Quaternion<f64>>,
        translation: impl Into<Vector3<f64>>,
    ) -> Result<Self, WorldError> {
        let q = rotation.into();
        let [x, y, z, w] = [q.v.x, q.v.y, q.v.z, q.s];
        let n2 = x * x + y * y + z * z + w * w;
        if !(n2 > 0.0 && n2.is_finite()) {
            return Err(WorldError::BadNumber { what: "rotation quaternion's length", value: n2.sqrt() });
        }
        let s = 2.0 / n2;
        // The rotation matrix of a quaternion, by columns.
        let linear = [
            [1.0 - s * (y * y + z * z), s * (x * y + w * z), s * (x * z - w * y)],
            [s * (x * y - w * z), 1.0 - s * (x * x + z * z), s * (y * z + w * x)],
            [s * (x * z + w * y), s * (y * z - w * x), 1.0 - s * (x * x + y * y)],
        ];
        Pose::new(linear, translation.into().into())
    }
}

/// The homogeneous matrix of the pose: columns `L·e₁, L·e₂, L·e₃` and
/// the translation, bottom row `0 0 0 1`.
impl From<Pose<3>> for ColumnMatrix4<f64> {
    fn from(p: Pose<3>) -> Self {
        let (l, t) = (p.linear(), p.translation());
        let col = |c: [f64; 3], w: f64| Vector4 { x: c[0], y: c[1], z: c[2], w };
        ColumnMatrix4 { x: col(l[0], 0.0), y: col(l[1], 0.0), z: col(l[2], 0.0), w: col(t, 1.0) }
    }
}

/// The pose of a homogeneous affine matrix.
///
/// # Errors
/// [`WorldError::BadNumber`] when the bottom row is not `0 0 0 1`; the
/// errors of [`Pose::new`] otherwise.
impl TryFrom<ColumnMatrix4<f64>> for Pose<3> {
    type Error = WorldError;

    fn try_from(m: ColumnMatrix4<f64>) -> Result<Self, WorldError> {
        let bottom = [m.x.w, m.y.w, m.z.w, m.w.w];
        if let Some((_, &value)) = bottom.iter().enumerate().find(|&(i, &v)| v != if i == 3 { 1.0 } else { 0.0 }) {
            return Err(WorldError::BadNumber { what: "homogeneous matrix's bottom row", value });
        }
        let col = |c: Vector4<f64>| [c.x, c.y, c.z];
        Pose::new([col(m.x), col(m.y), col(m.z)], col(m.w))
    }
}

/// The homogeneous matrix of the 2D pose (bottom row `0 0 1`).
impl From<Pose<2>> for ColumnMatrix3<f64> {
    fn from(p: Pose<2>) -> Self {
        let (l, t) = (p.linear(), p.translation());
        let col = |c: [f64; 2], z: f64| Vector3 { x: c[0], y: c[1], z };
        ColumnMatrix3 { x: col(l[0], 0.0), y: col(l[1], 0.0), z: col(t, 1.0) }
    }
}

/// The 2D pose of a homogeneous affine matrix.
///
/// # Errors
/// As for 3D.
impl TryFrom<ColumnMatrix3<f64>> for Pose<2> {
    type Error = WorldError;

    fn try_from(m: ColumnMatrix3<f64>) -> Result<Self, WorldError> {
        let bottom = [m.x.z, m.y.z, m.z.z];
        if let Some((_, &value)) = bottom.iter().enumerate().find(|&(i, &v)| v != if i == 2 { 1.0 } else { 0.0 }) {
            return Err(WorldError::BadNumber { what: "homogeneous matrix's bottom row", value });
        }
        let col = |c: Vector3<f64>| [c.x, c.y];
        Pose::new([col(m.x), col(m.y)], col(m.z))
    }
}

impl Pose<2> {
    /// The linear part and translation as mint types (columns `L·e₁`,
    /// `L·e₂`).
    ///
    /// ```
    /// use fmbgrid::Pose2;
    /// let p = Pose2::from_angle(0.5, [1.0, 2.0])?;
    /// let (l, t) = p.to_mint();
    /// assert_eq!(Pose2::new([l.x.into(), l.y.into()], t.into())?, p);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn to_mint(&self) -> (mint::ColumnMatrix2<f64>, Vector2<f64>) {
        let (l, t) = (self.linear(), self.translation());
        (mint::ColumnMatrix2 { x: l[0].into(), y: l[1].into() }, t.into())
    }
}
