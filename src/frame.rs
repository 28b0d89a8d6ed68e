//! Frames, the primitives of the engine: an origin plus `D` component vectors,
//! spanning a parallelepiped ("cuboid") or a simplex ("tetrahedron"; a
//! triangle in 2D), optionally translating by a constant displacement over
//! the time step `t ∈ [0, 1]`.
//!
//! Everything the narrow phase needs per frame (the inverse of the component
//! matrix, the swept box, the scale) is computed and validated once here, so
//! a `Frame` that exists is well formed: the narrow phase never meets NaN,
//! infinity or a singular matrix.

use crate::aabb::Aabb;
use crate::error::FrameError;
pub use crate::limits::{MAX_COORDINATE, MIN_RELATIVE_LENGTH};
use crate::math::{add, invert_columns, norm, sub};
use crate::range;

/// Smallest accepted `|det C| / Π|cᵢ|` (the sine of the smallest angle, in
/// 2D). Below it, round-off in the inverse would exceed the engine's 1e-9
/// relative accuracy.
pub const MIN_HADAMARD_RATIO: f64 = 1e-6;

/// Frames whose smallest height (the distance from a face to the opposite
/// face or vertex) is below `THIN_RATIO` times their longest component are
/// *thin*. FMB's elimination combines nearly parallel rows of such a frame
/// (a thin tetrahedron's two large faces) and loses the digits that decide
/// the pair, so every pair with a thin frame is decided, and timed, by the
/// separating-axis test ([`crate::sat`]), which judges each axis on its own.
/// Measured with an exact oracle (`tests/narrow/thin_frames.rs`): FMB's first wrong
/// answers appear at heights near 1e-7 of the longest component.
pub const THIN_RATIO: f64 = 1e-3;

/// The shape spanned by a frame's components.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum FrameKind {
    /// A simplex `{O + C·X : X ≥ 0, ΣXᵢ ≤ 1}`: a triangle in 2D, a
    /// tetrahedron in 3D.
    Tetrahedron,
    /// A parallelepiped `{O + C·X : X ∈ [0,1]^D}` (any parallelogram in 2D,
    /// not only rectangles).
    Cuboid,
}

/// A parallelepiped or simplex in `D` dimensions (`D` = 2 or 3), static or
/// translating by [`velocity`](Frame::velocity) over the step `t ∈ [0, 1]`.
///
/// `components[i]` is the `i`-th component vector `cᵢ`; the points of the
/// frame are `origin + Σ Xᵢ cᵢ` for `X` in the unit cube (cuboid) or the unit
/// simplex (tetrahedron), displaced by `t · velocity` at time `t`.
///
/// ```
/// use fmbgrid::{Frame3, FrameKind};
/// let unit = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let cube = Frame3::cuboid([0.0; 3], unit)?;
/// let tet = Frame3::tetrahedron([0.5; 3], unit)?.with_velocity([-4.0, 0.0, 0.0])?;
/// assert_eq!(cube.kind(), FrameKind::Cuboid);
/// assert_eq!(tet.aabb().min, [-3.5, 0.5, 0.5]); // swept over the step
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "crate::serde_impls::FrameData<D>", into = "crate::serde_impls::FrameData<D>")
)]
#[repr(C)]
pub struct Frame<const D: usize> {
    /// World box, swept over the step when the frame moves.
    aabb: Aabb<D>,
    origin: [f64; D],
    /// The precision bound of its reach (`range.rs`): an `f32`, so that
    /// it fits the struct's padding.
    reach: f32,
    /// Smallest height below [`THIN_RATIO`] of the longest component.
    thin: bool,
    kind: FrameKind,
    comps: [[f64; D]; D],
    velocity: [f64; D],
    /// Rows of `C⁻¹`: the local coordinate `Xⱼ` of a point `p` at rest is
    /// `inv[j] · (p - origin)`. Also the (scaled) face normals.
    inv: [[f64; D]; D],
}

/// A 2D frame: parallelogram or triangle.
pub type Frame2 = Frame<2>;
/// A 3D frame: parallelepiped or tetrahedron.
pub type Frame3 = Frame<3>;

pub(crate) fn check_coords<const D: usize>(what: &'static str, v: &[f64; D]) -> Result<(), FrameError> {
    for &value in v {
        if !value.is_finite() {
            return Err(FrameError::NonFinite { what, value });
        }
        if value.abs() > MAX_COORDINATE {
            return Err(FrameError::TooLarge { what, value, limit: MAX_COORDINATE });
        }
    }
    Ok(())
}

/// True when the frame's smallest height is below [`THIN_RATIO`] of its
/// longest component. Row `j` of `C⁻¹` is the normal of the faces
/// `Xⱼ = 0` (and `Xⱼ = 1`) scaled by the inverse of their distance, the
/// height; a tetrahedron's fourth face has the rows' sum.
fn is_thin<const D: usize>(kind: FrameKind, comps: &[[f64; D]; D], inv: &[[f64; D]; D]) -> bool {
    let longest = comps.iter().fold(0.0f64, |m, c| m.max(norm(c)));
    let mut steepest = inv.iter().fold(0.0f64, |m, r| m.max(norm(r)));
    if kind == FrameKind::Tetrahedron {
        let sum: [f64; D] = std::array::from_fn(|k| inv.iter().map(|r| r[k]).sum());
        steepest = steepest.max(norm(&sum));
    }
    // height = 1 / steepest < THIN_RATIO · longest
    1.0 < THIN_RATIO * longest * steepest
}

const COMPONENT_NAMES: [&str; 4] = ["component 0", "component 1", "component 2", "component 3"];

impl<const D: usize> Frame<D> {
    /// Compile-time guard: only 2D and 3D frames exist.
    pub(crate) const SUPPORTED: () = assert!(D == 2 || D == 3, "fmbgrid frames are 2D or 3D");

    /// A frame of the given kind, at rest.
    ///
    /// # Errors
    /// [`FrameError`] when a number is not finite or too large, or the
    /// components are degenerate (see [`MIN_HADAMARD_RATIO`],
    /// [`MIN_RELATIVE_LENGTH`]).
    ///
    /// ```
    /// use fmbgrid::{Frame2, FrameError, FrameKind};
    /// let f = Frame2::new(FrameKind::Cuboid, [0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]])?;
    /// assert_eq!(f.vertices().count(), 4);
    /// let flat = Frame2::new(FrameKind::Cuboid, [0.0, 0.0], [[1.0, 1.0], [2.0, 2.0]]);
    /// assert!(matches!(flat, Err(FrameError::Degenerate { .. })));
    /// # Ok::<(), FrameError>(())
    /// ```
    pub fn new(kind: FrameKind, origin: [f64; D], components: [[f64; D]; D]) -> Result<Self, FrameError> {
        let () = Self::SUPPORTED;
        check_coords("origin", &origin)?;
        for (i, c) in components.iter().enumerate() {
            check_coords(COMPONENT_NAMES[i], c)?;
        }
        let lengths: [f64; D] = std::array::from_fn(|i| norm(&components[i]));
        let longest = lengths.iter().fold(0.0f64, |m, &l| m.max(l));
        for (index, &length) in lengths.iter().enumerate() {
            if !(length > 0.0 && length >= MIN_RELATIVE_LENGTH * longest) {
                return Err(FrameError::TooThin { index, length, scale: longest });
            }
        }
        // Invert the matrix of unit columns: its determinant is the Hadamard
        // ratio, and it cannot overflow whatever the lengths.
        let unit: [[f64; D]; D] = std::array::from_fn(|i| components[i].map(|x| x / lengths[i]));
        let degenerate = |ratio: f64| FrameError::Degenerate { ratio, limit: MIN_HADAMARD_RATIO };
        let (unit_inv, det) = invert_columns(&unit).ok_or(degenerate(0.0))?;
        // `det` is finite here (`invert_columns` checks it).
        if det.abs() < MIN_HADAMARD_RATIO {
            return Err(degenerate(det.abs()));
        }
        let inv = std::array::from_fn(|j| unit_inv[j].map(|x| x / lengths[j]));
        let shortest = lengths.iter().fold(f64::INFINITY, |m, &l| m.min(l));
        let reach = range::precision_bound(shortest);
        let thin = is_thin(kind, &components, &inv);
        let mut frame =
            Frame { kind, origin, comps: components, velocity: [0.0; D], inv, aabb: Aabb::EMPTY, reach, thin };
        frame.aabb = frame.compute_aabb();
        frame.check_range()?;
        Ok(frame)
    }

    /// A frame from parts whose inverse is already known (a valid frame's
    /// turned, scaled or translated: the enclosures of spinning frames),
    /// without the degeneracy checks of [`Frame::new`]; `reach` is a
    /// precision bound no larger than the new frame's own (the original
    /// frame's, for a frame at least as large). The range rule is checked
    /// on the swept box.
    pub(crate) fn from_inverse(
        kind: FrameKind,
        origin: [f64; D],
        comps: [[f64; D]; D],
        inv: [[f64; D]; D],
        velocity: [f64; D],
        reach: f32,
    ) -> Result<Self, FrameError> {
        let thin = is_thin(kind, &comps, &inv);
        let mut frame = Frame { kind, origin, comps, velocity, inv, aabb: Aabb::EMPTY, reach, thin };
        frame.aabb = frame.compute_aabb();
        // Also refuses a non-finite box: NaN is beyond any reach.
        frame.check_range()?;
        Ok(frame)
    }

    /// The [range rule](crate::range) on the (swept) box.
    fn check_range(&self) -> Result<(), FrameError> {
        match range::beyond(&self.aabb, &[0.0; D], self.reach) {
            Some(coordinate) => Err(FrameError::OutOfRange { coordinate, reach: self.reach() }),
            None => Ok(()),
        }
    }

    /// A parallelepiped `{origin + Σ Xᵢ components[i] : X ∈ [0,1]^D}`.
    ///
    /// # Errors
    /// As [`Frame::new`].
    ///
    /// ```
    /// use fmbgrid::Frame3;
    /// let a = Frame3::cuboid([0.0; 3], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])?;
    /// assert_eq!(a.aabb().max, [1.0, 1.0, 1.0]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn cuboid(origin: [f64; D], components: [[f64; D]; D]) -> Result<Self, FrameError> {
        Self::new(FrameKind::Cuboid, origin, components)
    }

    /// A simplex with vertices `origin` and `origin + components[i]`.
    ///
    /// # Errors
    /// As [`Frame::new`].
    ///
    /// ```
    /// use fmbgrid::Frame2;
    /// let t = Frame2::tetrahedron([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]])?; // a triangle
    /// assert_eq!(t.vertices().count(), 3);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn tetrahedron(origin: [f64; D], components: [[f64; D]; D]) -> Result<Self, FrameError> {
        Self::new(FrameKind::Tetrahedron, origin, components)
    }

    /// The axis-aligned box `[min, max]` as a cuboid frame.
    ///
    /// # Errors
    /// [`FrameError::EmptyBox`] unless `min < max` on every axis, or as
    /// [`Frame::new`].
    ///
    /// ```
    /// use fmbgrid::{Frame2, FrameError};
    /// let b = Frame2::from_aabb([1.0, 2.0], [3.0, 5.0])?;
    /// assert_eq!(b.aabb().max, [3.0, 5.0]);
    /// assert!(matches!(Frame2::from_aabb([1.0, 0.0], [0.0, 1.0]), Err(FrameError::EmptyBox { axis: 0, .. })));
    /// # Ok::<(), FrameError>(())
    /// ```
    pub fn from_aabb(min: [f64; D], max: [f64; D]) -> Result<Self, FrameError> {
        check_coords("min", &min)?;
        check_coords("max", &max)?;
        if let Some(axis) = (0..D).find(|&i| min[i] >= max[i]) {
            return Err(FrameError::EmptyBox { axis, min: min[axis], max: max[axis] });
        }
        let comps = std::array::from_fn(|i| std::array::from_fn(|k| if i == k { max[i] - min[i] } else { 0.0 }));
        Self::cuboid(min, comps)
    }

    /// An oriented box: `center`, positive `half_extents`, and `axes[i]`, the
    /// world direction of the box's `i`-th local axis (the `i`-th column of
    /// its rotation matrix; normalised here, so any non-zero length works).
    ///
    /// # Errors
    /// [`FrameError::NonPositiveExtent`], or as [`Frame::new`] (for instance
    /// when two axes are parallel).
    ///
    /// ```
    /// use fmbgrid::Frame2;
    /// let s = std::f64::consts::FRAC_1_SQRT_2;
    /// let diamond = Frame2::oriented_box([0.0, 0.0], [1.0, 1.0], [[s, s], [-s, s]])?;
    /// assert!((diamond.aabb().max[0] - 2.0f64.sqrt()).abs() < 1e-12);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn oriented_box(center: [f64; D], half_extents: [f64; D], axes: [[f64; D]; D]) -> Result<Self, FrameError> {
        check_coords("center", &center)?;
        for (index, &value) in half_extents.iter().enumerate() {
            if value.is_nan() || value <= 0.0 {
                return Err(FrameError::NonPositiveExtent { index, value });
            }
        }
        check_coords("half extents", &half_extents)?;
        for (i, a) in axes.iter().enumerate() {
            check_coords(COMPONENT_NAMES[i], a)?;
            if norm(a) == 0.0 {
                return Err(FrameError::TooThin { index: i, length: 0.0, scale: 1.0 });
            }
        }
        let comps: [[f64; D]; D] = std::array::from_fn(|i| {
            let s = 2.0 * half_extents[i] / norm(&axes[i]);
            axes[i].map(|x| x * s)
        });
        let mut origin = center;
        for c in &comps {
            for k in 0..D {
                origin[k] -= 0.5 * c[k];
            }
        }
        Self::cuboid(origin, comps)
    }

    /// A simplex from its `D + 1` vertices (3 for a triangle, 4 for a
    /// tetrahedron); the first vertex becomes the origin.
    ///
    /// # Errors
    /// [`FrameError::VertexCount`] for the wrong number of vertices, or as
    /// [`Frame::new`].
    ///
    /// ```
    /// use fmbgrid::Frame3;
    /// let t = Frame3::simplex(&[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])?;
    /// assert_eq!(t.components()[2], [0.0, 0.0, 1.0]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn simplex(vertices: &[[f64; D]]) -> Result<Self, FrameError> {
        if vertices.len() != D + 1 {
            return Err(FrameError::VertexCount { dim: D, expected: D + 1, got: vertices.len() });
        }
        for v in vertices {
            check_coords("vertex", v)?;
        }
        let o = vertices[0];
        Self::tetrahedron(o, std::array::from_fn(|i| sub(&vertices[i + 1], &o)))
    }

    /// The same frame translating by `velocity` over the step (its
    /// displacement between `t = 0` and `t = 1`).
    ///
    /// # Errors
    /// [`FrameError::NonFinite`] or [`FrameError::TooLarge`] for the
    /// velocity, [`FrameError::OutOfRange`] when the swept box leaves the
    /// frame's [reach](Frame::reach).
    ///
    /// ```
    /// use fmbgrid::Frame2;
    /// let f = Frame2::from_aabb([0.0, 0.0], [1.0, 1.0])?.with_velocity([2.0, 0.0])?;
    /// assert!(f.is_moving());
    /// assert_eq!(f.aabb().max, [3.0, 1.0]);
    /// assert!(f.with_velocity([f64::NAN, 0.0]).is_err());
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn with_velocity(mut self, velocity: [f64; D]) -> Result<Self, FrameError> {
        check_coords("velocity", &velocity)?;
        self.velocity = velocity;
        self.aabb = self.compute_aabb();
        self.check_range()?;
        Ok(self)
    }

    /// The largest coordinate magnitude the frame's box may have, anywhere
    /// it goes: `min(1e15, 1e12 × its shortest component)`, the second
    /// bound rounded up to an `f32` (at most 1.2e-7 of it above; the [range
    /// rule](crate::range)). A
    /// world stops a body before any of its frames' boxes passes it.
    ///
    /// ```
    /// # use fmbgrid::Frame2;
    /// let reach = Frame2::from_aabb([0.0; 2], [1.0, 3.0])?.reach();
    /// assert!(reach >= 1e12 && reach < 1.0000001e12);
    /// assert_eq!(Frame2::from_aabb([0.0; 2], [1e6, 1e6])?.reach(), 1e15);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    #[inline]
    pub fn reach(&self) -> f64 {
        range::reach(self.reach)
    }

    /// The precision bound of the reach as stored, for the step's hot check.
    #[inline(always)]
    pub(crate) fn reach_bound(&self) -> f32 {
        self.reach
    }

    /// Cuboid or tetrahedron.
    ///
    /// ```
    /// # use fmbgrid::{Frame2, FrameKind};
    /// assert_eq!(Frame2::from_aabb([0.0; 2], [1.0; 2])?.kind(), FrameKind::Cuboid);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    #[inline]
    pub fn kind(&self) -> FrameKind {
        self.kind
    }

    /// The origin `O` at `t = 0`.
    ///
    /// ```
    /// # use fmbgrid::Frame2;
    /// assert_eq!(Frame2::from_aabb([1.0, 2.0], [3.0, 3.0])?.origin(), [1.0, 2.0]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    #[inline]
    pub fn origin(&self) -> [f64; D] {
        self.origin
    }

    /// The component vectors: `components()[i]` is `cᵢ`.
    ///
    /// ```
    /// # use fmbgrid::Frame2;
    /// assert_eq!(Frame2::from_aabb([0.0; 2], [2.0, 3.0])?.components(), [[2.0, 0.0], [0.0, 3.0]]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    #[inline]
    pub fn components(&self) -> [[f64; D]; D] {
        self.comps
    }

    /// Displacement over the step (zero for a frame at rest).
    ///
    /// ```
    /// # use fmbgrid::Frame2;
    /// assert_eq!(Frame2::from_aabb([0.0; 2], [1.0; 2])?.velocity(), [0.0, 0.0]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    #[inline]
    pub fn velocity(&self) -> [f64; D] {
        self.velocity
    }

    /// True when the velocity is not zero.
    ///
    /// ```
    /// # use fmbgrid::Frame2;
    /// assert!(!Frame2::from_aabb([0.0; 2], [1.0; 2])?.is_moving());
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    #[inline]
    pub fn is_moving(&self) -> bool {
        self.velocity.iter().any(|&v| v != 0.0)
    }

    /// The frame's world box, swept over the step when it moves.
    ///
    /// ```
    /// # use fmbgrid::Frame3;
    /// let t = Frame3::tetrahedron([0.0; 3], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])?;
    /// assert_eq!(t.aabb().max, [1.0, 1.0, 1.0]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    #[inline]
    pub fn aabb(&self) -> Aabb<D> {
        self.aabb
    }

    /// This frame, which is at rest, translating by `displacement` over the
    /// step, with its swept box; `displacement` has been validated by the
    /// caller.
    #[inline]
    pub(crate) fn moved(&self, displacement: [f64; D]) -> Self {
        debug_assert!(!self.is_moving());
        let mut f = *self;
        f.velocity = displacement;
        f.aabb = self.aabb.swept(&displacement);
        f
    }

    /// This frame at rest where it is at instant `t` of the step.
    #[inline]
    pub(crate) fn at(&self, t: f64) -> Self {
        let mut f = *self;
        f.origin = std::array::from_fn(|k| self.origin[k] + t * self.velocity[k]);
        f.velocity = [0.0; D];
        f.aabb = f.compute_aabb();
        f
    }

    /// The frame with the box it computes itself, as [`Frame::new`] (and
    /// so deserialisation) gives it: the frame of a store without the
    /// round-off of the steps that moved its box.
    pub(crate) fn with_own_aabb(mut self) -> Self {
        self.aabb = self.compute_aabb();
        self
    }

    /// The frame with its box replaced (a snapshot's, checked by the
    /// caller to be this frame's box up to round-off).
    pub(crate) fn with_aabb(mut self, aabb: Aabb<D>) -> Self {
        self.aabb = aabb;
        self
    }

    /// Translates the frame at rest by `offset` (validated by the caller).
    #[inline]
    pub(crate) fn translate(&mut self, offset: &[f64; D]) {
        for i in 0..D {
            self.origin[i] += offset[i];
            self.aabb.min[i] += offset[i];
            self.aabb.max[i] += offset[i];
        }
    }

    /// True for a thin frame (see [`THIN_RATIO`]): its pairs are decided by
    /// the separating-axis test.
    ///
    /// ```
    /// use fmbgrid::Frame3;
    /// assert!(!Frame3::from_aabb([0.0; 3], [1.0; 3])?.is_thin());
    /// assert!(Frame3::from_aabb([0.0; 3], [1.0, 1.0, 1e-6])?.is_thin());
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn is_thin(&self) -> bool {
        self.thin
    }

    /// Rows of the inverse component matrix (crate-internal hot data).
    #[inline(always)]
    pub(crate) fn inv(&self) -> &[[f64; D]; D] {
        &self.inv
    }

    /// Number of vertices: `2^D` for a cuboid, `D + 1` for a tetrahedron.
    ///
    /// ```
    /// # use fmbgrid::Frame3;
    /// assert_eq!(Frame3::from_aabb([0.0; 3], [1.0; 3])?.vertex_count(), 8);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn vertex_count(&self) -> usize {
        match self.kind {
            FrameKind::Cuboid => 1 << D,
            FrameKind::Tetrahedron => D + 1,
        }
    }

    /// The vertices at `t = 0`. Cuboid vertex `m` is `O + Σ_{bit i of m} cᵢ`;
    /// tetrahedron vertex 0 is `O` and vertex `i + 1` is `O + cᵢ`.
    ///
    /// ```
    /// # use fmbgrid::Frame2;
    /// let v: Vec<_> = Frame2::from_aabb([0.0; 2], [1.0; 2])?.vertices().collect();
    /// assert_eq!(v, [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn vertices(&self) -> impl Iterator<Item = [f64; D]> + '_ {
        (0..self.vertex_count()).map(move |m| self.vertex(m))
    }

    /// Vertex `m` in the numbering of [`Frame::vertices`].
    pub(crate) fn vertex(&self, m: usize) -> [f64; D] {
        match self.kind {
            FrameKind::Cuboid => {
                let mut p = self.origin;
                for (i, c) in self.comps.iter().enumerate() {
                    if m & (1 << i) != 0 {
                        p = add(&p, c);
                    }
                }
                p
            }
            FrameKind::Tetrahedron if m == 0 => self.origin,
            FrameKind::Tetrahedron => add(&self.origin, &self.comps[m - 1]),
        }
    }

    /// Local coordinates `X = C⁻¹ (p - O)` of a world point `p`, for the
    /// frame at `t = 0`.
    ///
    /// ```
    /// # use fmbgrid::Frame2;
    /// let f = Frame2::cuboid([1.0, 1.0], [[2.0, 0.0], [0.0, 4.0]])?;
    /// assert_eq!(f.local_coordinates(&[2.0, 2.0]), [0.5, 0.25]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn local_coordinates(&self, p: &[f64; D]) -> [f64; D] {
        crate::math::mul_rows(&self.inv, &sub(p, &self.origin))
    }

    /// True when the world point `p` lies in the closed frame at time `t`,
    /// within 1e-12 in local coordinates (a fraction of the frame's size).
    ///
    /// ```
    /// # use fmbgrid::Frame2;
    /// let t = Frame2::tetrahedron([0.0; 2], [[1.0, 0.0], [0.0, 1.0]])?;
    /// assert!(t.contains_point(&[0.25, 0.25], 0.0));
    /// assert!(!t.contains_point(&[0.75, 0.75], 0.0));
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn contains_point(&self, p: &[f64; D], t: f64) -> bool {
        let at_t: [f64; D] = std::array::from_fn(|k| p[k] - t * self.velocity[k]);
        let x = self.local_coordinates(&at_t);
        let tol = 1e-12;
        let inside_low = x.iter().all(|&v| v >= -tol);
        match self.kind {
            FrameKind::Cuboid => inside_low && x.iter().all(|&v| v <= 1.0 + tol),
            FrameKind::Tetrahedron => inside_low && x.iter().sum::<f64>() <= 1.0 + tol,
        }
    }

    fn compute_aabb(&self) -> Aabb<D> {
        let mut b = Aabb::EMPTY;
        for v in self.vertices() {
            b.include(&v);
            b.include(&add(&v, &self.velocity));
        }
        b
    }
}

impl Frame<2> {
    /// A triangle from its three vertices.
    ///
    /// # Errors
    /// As [`Frame::new`] (colinear vertices are degenerate).
    ///
    /// ```
    /// use fmbgrid::Frame2;
    /// let t = Frame2::triangle([0.0, 0.0], [2.0, 0.0], [0.0, 2.0])?;
    /// assert!(t.contains_point(&[0.5, 0.5], 0.0));
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn triangle(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> Result<Self, FrameError> {
        Self::simplex(&[a, b, c])
    }
}

impl Frame<3> {
    /// A tetrahedron from its four vertices.
    ///
    /// # Errors
    /// As [`Frame::new`] (coplanar vertices are degenerate).
    ///
    /// ```
    /// use fmbgrid::Frame3;
    /// let t = Frame3::tetrahedron_from_vertices([0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0])?;
    /// assert!(t.contains_point(&[0.1, 0.1, 0.1], 0.0));
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn tetrahedron_from_vertices(a: [f64; 3], b: [f64; 3], c: [f64; 3], d: [f64; 3]) -> Result<Self, FrameError> {
        Self::simplex(&[a, b, c, d])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const I3: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

    #[test]
    fn bad_numbers_are_refused_with_their_reason() {
        assert!(matches!(Frame3::cuboid([f64::NAN, 0.0, 0.0], I3), Err(FrameError::NonFinite { what: "origin", .. })));
        let mut c = I3;
        c[1][2] = f64::INFINITY;
        assert!(matches!(Frame3::cuboid([0.0; 3], c), Err(FrameError::NonFinite { what: "component 1", .. })));
        assert!(matches!(Frame3::cuboid([1e16, 0.0, 0.0], I3), Err(FrameError::TooLarge { .. })));
        let f = Frame3::cuboid([0.0; 3], I3).unwrap();
        assert!(matches!(f.with_velocity([0.0, f64::NEG_INFINITY, 0.0]), Err(FrameError::NonFinite { .. })));
    }

    #[test]
    fn degenerate_and_near_degenerate_frames_are_refused() {
        let colinear = [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
        assert!(matches!(Frame3::cuboid([0.0; 3], colinear), Err(FrameError::Degenerate { .. })));
        // The paper's failing validation frame (det -0.0017 at scale 100): refused.
        let near = [[55.239119, 38.152177], [-62.031537, -42.843548]];
        assert!(matches!(Frame2::cuboid([-63.57, -22.58], near), Err(FrameError::Degenerate { .. })));
        // Nearly colinear, measured relative to lengths: same verdict at any scale.
        for s in [1e-6, 1.0, 1e9] {
            let c = [[s, 0.0], [s, s * 1e-7]];
            assert!(matches!(Frame2::cuboid([0.0, 0.0], c), Err(FrameError::Degenerate { .. })));
            let c = [[s, 0.0], [s, s * 1e-5]];
            assert!(Frame2::cuboid([0.0, 0.0], c).is_ok());
        }
        let zero = [[0.0, 0.0], [0.0, 1.0]];
        assert!(matches!(Frame2::cuboid([0.0, 0.0], zero), Err(FrameError::TooThin { index: 0, .. })));
        let tiny = [[1e-13, 0.0], [0.0, 1.0]];
        assert!(matches!(Frame2::cuboid([0.0, 0.0], tiny), Err(FrameError::TooThin { .. })));
        assert!(matches!(Frame2::simplex(&[[0.0, 0.0], [1.0, 1.0]]), Err(FrameError::VertexCount { .. })));
        assert!(Frame2::triangle([0.0, 0.0], [1.0, 1.0], [2.0, 2.0]).is_err());
        assert!(Frame2::oriented_box([0.0; 2], [1.0, 0.0], [[1.0, 0.0], [0.0, 1.0]]).is_err());
    }

    #[test]
    fn inverse_maps_vertices_to_unit_coordinates() {
        let f = Frame3::cuboid([1.0, -2.0, 3.0], [[2.0, 1.0, 0.0], [0.0, 3.0, 1.0], [1.0, 0.0, 4.0]]).unwrap();
        for (m, v) in f.vertices().enumerate() {
            let x = f.local_coordinates(&v);
            for (i, xi) in x.iter().enumerate() {
                let expect = f64::from(u8::from(m & (1 << i) != 0));
                assert!((xi - expect).abs() < 1e-14, "{x:?}");
            }
        }
    }

    #[test]
    fn oriented_box_is_centred_and_sized() {
        let f = Frame3::oriented_box([1.0, 2.0, 3.0], [0.5, 1.0, 2.0], I3).unwrap();
        assert_eq!(f.aabb(), Aabb { min: [0.5, 1.0, 1.0], max: [1.5, 3.0, 5.0] });
    }
}
