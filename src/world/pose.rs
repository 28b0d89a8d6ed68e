//! Poses: invertible affine maps placing a body's frames in the world.

use crate::error::WorldError;
use crate::frame::{Frame, MAX_COORDINATE, MIN_HADAMARD_RATIO};
use crate::math::{add, invert_columns, norm};

/// An invertible affine map `x ↦ L·x + t`: a rotation and translation, with
/// scale and shear allowed (frames stay frames under any such map).
///
/// `linear[i]` is the image of the `i`-th unit vector (the `i`-th column of
/// `L`), the same convention as [`Frame::components`].
///
/// ```
/// use fmbgrid::Pose3;
/// let p = Pose3::from_translation([0.0, 5.0, 0.0])?;
/// assert_eq!(p.transform_point(&[1.0, 0.0, 0.0]), [1.0, 5.0, 0.0]);
/// # Ok::<(), fmbgrid::WorldError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "crate::serde_impls::PoseData<D>", into = "crate::serde_impls::PoseData<D>")
)]
pub struct Pose<const D: usize> {
    linear: [[f64; D]; D],
    translation: [f64; D],
}

/// A 2D pose.
pub type Pose2 = Pose<2>;
/// A 3D pose.
pub type Pose3 = Pose<3>;

const fn identity<const D: usize>() -> [[f64; D]; D] {
    let mut m = [[0.0; D]; D];
    let mut i = 0;
    while i < D {
        m[i][i] = 1.0;
        i += 1;
    }
    m
}

fn check<const D: usize>(what: &'static str, v: &[f64; D]) -> Result<(), WorldError> {
    match v.iter().find(|x| !x.is_finite() || x.abs() > MAX_COORDINATE) {
        Some(&value) => Err(WorldError::BadNumber { what, value }),
        None => Ok(()),
    }
}

impl<const D: usize> Pose<D> {
    /// The identity pose.
    ///
    /// ```
    /// use fmbgrid::Pose2;
    /// assert_eq!(Pose2::IDENTITY.transform_point(&[1.0, 2.0]), [1.0, 2.0]);
    /// ```
    pub const IDENTITY: Self = Pose { linear: identity(), translation: [0.0; D] };

    /// The affine map `x ↦ L·x + translation` with `linear[i] = L·eᵢ`.
    ///
    /// # Errors
    /// [`WorldError::BadNumber`] for a non-finite or too large entry, and
    /// [`WorldError::DegeneratePose`] when `L` is (nearly) singular, by the
    /// same measure as frames ([`MIN_HADAMARD_RATIO`]).
    ///
    /// ```
    /// use fmbgrid::{Pose2, WorldError};
    /// let shear = Pose2::new([[1.0, 0.0], [0.5, 1.0]], [0.0, 0.0])?;
    /// assert_eq!(shear.transform_point(&[0.0, 2.0]), [1.0, 2.0]);
    /// assert!(matches!(Pose2::new([[1.0, 0.0], [2.0, 0.0]], [0.0; 2]), Err(WorldError::DegeneratePose { .. })));
    /// # Ok::<(), WorldError>(())
    /// ```
    pub fn new(linear: [[f64; D]; D], translation: [f64; D]) -> Result<Self, WorldError> {
        check("pose translation", &translation)?;
        for c in &linear {
            check("pose matrix", c)?;
        }
        let lengths: [f64; D] = std::array::from_fn(|i| norm(&linear[i]));
        let unit: [[f64; D]; D] = std::array::from_fn(|i| linear[i].map(|x| x / lengths[i]));
        let ratio =
            if lengths.iter().all(|&l| l > 0.0) { invert_columns(&unit).map_or(0.0, |(_, d)| d.abs()) } else { 0.0 };
        if ratio < MIN_HADAMARD_RATIO {
            return Err(WorldError::DegeneratePose { ratio });
        }
        Ok(Pose { linear, translation })
    }

    /// A pure translation.
    ///
    /// # Errors
    /// [`WorldError::BadNumber`] for a non-finite or too large coordinate.
    ///
    /// ```
    /// use fmbgrid::Pose2;
    /// assert!(Pose2::from_translation([f64::NAN, 0.0]).is_err());
    /// ```
    pub fn from_translation(translation: [f64; D]) -> Result<Self, WorldError> {
        check("pose translation", &translation)?;
        Ok(Pose { linear: identity(), translation })
    }

    /// The translation `t`.
    ///
    /// ```
    /// # use fmbgrid::Pose3;
    /// assert_eq!(Pose3::from_translation([1.0, 2.0, 3.0])?.translation(), [1.0, 2.0, 3.0]);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn translation(&self) -> [f64; D] {
        self.translation
    }

    /// Mutable translation, for the world's own advancing (validated there).
    pub(crate) fn translation_mut(&mut self) -> &mut [f64; D] {
        &mut self.translation
    }

    /// The linear part, by columns (`linear()[i] = L·eᵢ`).
    ///
    /// ```
    /// # use fmbgrid::Pose2;
    /// assert_eq!(Pose2::IDENTITY.linear(), [[1.0, 0.0], [0.0, 1.0]]);
    /// ```
    pub fn linear(&self) -> [[f64; D]; D] {
        self.linear
    }

    /// `L·v`: a direction or displacement in world coordinates.
    ///
    /// ```
    /// # use fmbgrid::Pose2;
    /// let p = Pose2::from_angle(std::f64::consts::FRAC_PI_2, [5.0, 5.0])?;
    /// let v = p.transform_vector(&[1.0, 0.0]);
    /// assert!(v[0].abs() < 1e-15 && (v[1] - 1.0).abs() < 1e-15);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn transform_vector(&self, v: &[f64; D]) -> [f64; D] {
        let mut out = [0.0; D];
        for (i, c) in self.linear.iter().enumerate() {
            for k in 0..D {
                out[k] += c[k] * v[i];
            }
        }
        out
    }

    /// `L·p + t`.
    ///
    /// ```
    /// # use fmbgrid::Pose2;
    /// assert_eq!(Pose2::from_translation([1.0, 1.0])?.transform_point(&[2.0, 0.0]), [3.0, 1.0]);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn transform_point(&self, p: &[f64; D]) -> [f64; D] {
        add(&self.transform_vector(p), &self.translation)
    }

    /// The frame `f` (body coordinates) placed in the world, at rest.
    ///
    /// # Errors
    /// [`WorldError::Frame`] when the placed frame is out of range or
    /// degenerate (a shearing pose can flatten a frame).
    ///
    /// ```
    /// use fmbgrid::{Frame2, Pose2};
    /// let f = Frame2::from_aabb([0.0, 0.0], [1.0, 1.0])?;
    /// let placed = Pose2::from_translation([10.0, 0.0])?.transform_frame(&f)?;
    /// assert_eq!(placed.aabb().min, [10.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn transform_frame(&self, f: &Frame<D>) -> Result<Frame<D>, WorldError> {
        let c = f.components();
        Ok(Frame::new(
            f.kind(),
            self.transform_point(&f.origin()),
            std::array::from_fn(|i| self.transform_vector(&c[i])),
        )?)
    }
}

impl Pose<2> {
    /// A rotation by `angle` radians (counter-clockwise) then a translation.
    ///
    /// # Errors
    /// [`WorldError::BadNumber`] for a non-finite angle or translation.
    ///
    /// ```
    /// use fmbgrid::Pose2;
    /// let p = Pose2::from_angle(std::f64::consts::PI, [0.0, 0.0])?;
    /// let q = p.transform_point(&[1.0, 0.0]);
    /// assert!((q[0] + 1.0).abs() < 1e-15);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn from_angle(angle: f64, translation: [f64; 2]) -> Result<Self, WorldError> {
        check("pose angle", &[angle])?;
        let (s, c) = angle.sin_cos();
        Self::new([[c, s], [-s, c]], translation)
    }
}

impl Pose<3> {
    /// A rotation by `angle` radians about `axis` (right-handed; normalised
    /// here) then a translation.
    ///
    /// # Errors
    /// [`WorldError::BadNumber`] for non-finite input, [`WorldError::ZeroAxis`]
    /// for a zero axis.
    ///
    /// ```
    /// use fmbgrid::Pose3;
    /// let p = Pose3::from_axis_angle([0.0, 0.0, 2.0], std::f64::consts::FRAC_PI_2, [0.0; 3])?;
    /// let q = p.transform_point(&[1.0, 0.0, 0.0]);
    /// assert!(q[0].abs() < 1e-15 && (q[1] - 1.0).abs() < 1e-15);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn from_axis_angle(axis: [f64; 3], angle: f64, translation: [f64; 3]) -> Result<Self, WorldError> {
        check("rotation axis", &axis)?;
        check("pose angle", &[angle])?;
        let n = norm(&axis);
        if n == 0.0 {
            return Err(WorldError::ZeroAxis);
        }
        let [x, y, z] = axis.map(|v| v / n);
        let (s, c) = angle.sin_cos();
        let t = 1.0 - c;
        // Rodrigues' formula, by columns.
        let linear = [
            [t * x * x + c, t * x * y + s * z, t * x * z - s * y],
            [t * x * y - s * z, t * y * y + c, t * y * z + s * x],
            [t * x * z + s * y, t * y * z - s * x, t * z * z + c],
        ];
        Self::new(linear, translation)
    }
}
