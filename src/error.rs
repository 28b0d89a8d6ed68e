//! Errors returned for bad input. Nothing in the library panics on user data:
//! every refusal is one of these, with enough detail to find the culprit.

use std::fmt;

use thiserror::Error;

/// A number printed compactly: as written for everyday magnitudes,
/// in exponent form beyond them (`1e300`, not 301 digits).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Num(pub f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x == 0.0 || !x.is_finite() || (1e-4..1e7).contains(&x.abs()) { write!(f, "{x}") } else { write!(f, "{x:e}") }
    }
}

/// A derived bound printed to 7 significant digits (`1e12`, not
/// `1.00000006144e12`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Approx(pub f64);

impl fmt::Display for Approx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rounded: f64 = format!("{:.6e}", self.0).parse().unwrap_or(self.0);
        Num(rounded).fmt(f)
    }
}

/// Why a [`Frame`](crate::Frame) could not be built.
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum FrameError {
    /// A coordinate is NaN or infinite.
    #[error("{what} has a non-finite coordinate ({value})")]
    NonFinite {
        /// Which input: `"origin"`, `"component 1"`, `"velocity"`, ...
        what: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A coordinate exceeds [`MAX_COORDINATE`](crate::frame::MAX_COORDINATE) in
    /// absolute value; beyond it products in the narrow phase could overflow.
    #[error("{what} has a coordinate of magnitude {value:e}, above the supported {limit:e}")]
    TooLarge {
        /// Which input.
        what: &'static str,
        /// The offending value.
        value: f64,
        /// The limit it broke.
        limit: f64,
    },
    /// The components are (nearly) linearly dependent: the frame is flat.
    ///
    /// `ratio` is `|det C| / Π|cᵢ|` (1 for orthogonal components, 0 for
    /// colinear ones), refused below
    /// [`MIN_HADAMARD_RATIO`](crate::frame::MIN_HADAMARD_RATIO).
    #[error(
        "degenerate frame: components are nearly dependent (|det| / product of lengths = {ratio:e}, minimum {limit:e})"
    )]
    Degenerate {
        /// The measured ratio.
        ratio: f64,
        /// The minimum accepted.
        limit: f64,
    },
    /// A component is too short relative to the frame's longest one (a
    /// sliver): `length / scale` is below
    /// [`MIN_RELATIVE_LENGTH`](crate::frame::MIN_RELATIVE_LENGTH).
    #[error("degenerate frame: component {index} has length {length:e}, too small for a frame of scale {scale:e}")]
    TooThin {
        /// Index of the component.
        index: usize,
        /// Its length.
        length: f64,
        /// The frame's scale: its longest component's length.
        scale: f64,
    },
    /// The frame's box reaches beyond its [reach](crate::Frame::reach):
    /// `min(1e15, 1e12 × its shortest component)` (the [range
    /// rule](crate::range)).
    #[error(
        "frame box reaches {}, beyond the supported ±{} for a frame of its size (|x| <= 1e15 and <= 1e12 × its shortest component)",
        Num(*coordinate), Approx(*reach)
    )]
    OutOfRange {
        /// The coordinate beyond the reach.
        coordinate: f64,
        /// The frame's reach.
        reach: f64,
    },
    /// The wrong number of vertices was given to a vertex constructor.
    #[error("a {dim}D simplex needs {expected} vertices, got {got}")]
    VertexCount {
        /// The dimension.
        dim: usize,
        /// `dim + 1`.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// An axis-aligned box must have `min < max` on every axis.
    #[error("box is empty or flat on axis {axis}: min {} >= max {}", Num(*min), Num(*max))]
    EmptyBox {
        /// The axis.
        axis: usize,
        /// The box's minimum on that axis.
        min: f64,
        /// The box's maximum on that axis.
        max: f64,
    },
    /// A tolerance (a length) that is not a positive finite number.
    #[error("tolerance {} must be a positive finite length", Num(*value))]
    BadTolerance {
        /// The value given.
        value: f64,
    },
    /// A ray's length that is not a number in `[0, 1e15]`.
    #[error("ray length {} must be a number from 0 to 1e15", Num(*value))]
    BadRayLength {
        /// The value given.
        value: f64,
    },
    /// Half extents of an oriented box must be positive.
    #[error("half extent {index} is {}, it must be positive", Num(*value))]
    NonPositiveExtent {
        /// Axis index.
        index: usize,
        /// The value given.
        value: f64,
    },
}

/// Why a [`World`](crate::World) operation was refused. The world is left
/// exactly as it was.
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum WorldError {
    /// A number (pose, velocity, time step) is NaN, infinite or beyond
    /// [`MAX_COORDINATE`](crate::frame::MAX_COORDINATE).
    #[error("{what} is {}: it must be a finite number of magnitude at most 1e15", Num(*value))]
    BadNumber {
        /// Which input.
        what: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A body's displacement over a step, `velocity · dt`, is not a
    /// finite number of magnitude at most 1e15 (a runaway refused with
    /// [`Runaway::Refuse`](crate::Runaway::Refuse)).
    #[error("body {body}: velocity × dt is {}: it must be a finite number of magnitude at most 1e15", Num(*value))]
    BadDisplacement {
        /// The body.
        body: crate::BodyHandle,
        /// The first bad coordinate of its displacement.
        value: f64,
    },
    /// The time step is negative or not finite.
    #[error("time step {} must be finite and non-negative", Num(*dt))]
    BadTimeStep {
        /// The value given.
        dt: f64,
    },
    /// A tolerance (safety distance) that is negative or not finite.
    #[error("tolerance {} must be finite and non-negative", Num(*delta))]
    BadTolerance {
        /// The value given.
        delta: f64,
    },
    /// A ray whose direction is zero: it goes nowhere.
    #[error("the ray direction is zero: it needs a direction (any non-zero length)")]
    ZeroRay,
    /// A rotation axis of length zero: it gives no direction.
    #[error("the rotation axis is zero: it needs a direction (any non-zero length)")]
    ZeroAxis,
    /// A pose's linear part is (nearly) singular.
    #[error("degenerate pose: |det| / product of column lengths = {ratio:e}")]
    DegeneratePose {
        /// The measured Hadamard ratio.
        ratio: f64,
    },
    /// A rotation is not one: its matrix is scaled, sheared or mirrored
    /// beyond [`ROTATION_TOLERANCE`](crate::ROTATION_TOLERANCE).
    #[error("not a rotation: the largest entry of RᵀR − I is {error:e}, beyond 1e-6 (scaled, sheared or mirrored)")]
    NotARotation {
        /// The largest entry of `RᵀR − I` in magnitude (infinity for a mirror).
        error: f64,
    },
    /// A frame, once placed in the world, is invalid.
    #[error("frame {index} of the body: {source}")]
    Frame {
        /// Index of the frame in its body.
        index: usize,
        /// What is wrong with it.
        source: FrameError,
    },
    /// A body must have at least one frame.
    #[error("a body needs at least one frame")]
    EmptyBody,
    /// The handle does not name a live body (removed, or from another world).
    #[error("stale or foreign body handle {0}: no live body of this world has it")]
    StaleHandle(crate::BodyHandle),
    /// The frame index is past the body's frames.
    #[error("frame index {index} is out of range for body {body}")]
    NoSuchFrame {
        /// The body.
        body: crate::BodyHandle,
        /// The index asked for.
        index: u32,
    },
    /// Fixed bodies have no velocity.
    #[error("body {0} is fixed: it cannot be given a velocity")]
    FixedBody(crate::BodyHandle),
    /// A fixed body was given a velocity.
    #[error("a fixed body cannot have a velocity")]
    FixedVelocity,
    /// Moving this body would take one of its frames beyond its
    /// [reach](crate::Frame::reach) (the [range rule](crate::range)), with
    /// [`Runaway::Refuse`](crate::Runaway::Refuse).
    #[error("body {0} would leave the supported range (a frame's box within ±1e15 and ±1e12 × its shortest component)")]
    OutOfRange(crate::BodyHandle),
    /// [`World::exact_boxes`](crate::World::exact_boxes) after bodies were
    /// inserted, removed or re-posed: the contacts no longer name the
    /// frames the step tested.
    #[error("the world changed since the step: its contacts' frames are gone or moved")]
    ContactsOutdated,
    /// Memory could not be allocated: for the bodies asked for
    /// ([`World::try_reserve`](crate::World::try_reserve)), for a step's
    /// contacts (a scene where nearly everything overlaps), or for the pairs
    /// within a tolerance ([`World::pairs_within`](crate::World::pairs_within)).
    #[error("not enough memory: about {} or more could not be allocated", crate::fallible::size_text(*bytes))]
    OutOfMemory {
        /// About how many bytes were asked for.
        bytes: usize,
    },
    /// [`World::contact_geometry`](crate::World::contact_geometry) of a
    /// pair of which a body spins within the step: its contact is found
    /// by enclosures ([`intersect_spinning`](crate::intersect_spinning)),
    /// which give no normal or contact point.
    #[error("a body of the contact spins within the step: no contact geometry (only its interval and box)")]
    Spinning,
    /// A [`WorldSnapshot`](crate::WorldSnapshot) that no world could have
    /// taken (edited or corrupted): what is inconsistent.
    #[error("bad world snapshot: {0} inconsistent or out of range")]
    BadSnapshot(&'static str),
    /// More than 2^26 (67 million) fixed or moving frames, or `u32::MAX`
    /// bodies.
    #[error("too many frames or bodies (the limits are 2^26 fixed and 2^26 moving frames, u32::MAX bodies)")]
    TooMany,
}

impl From<FrameError> for WorldError {
    fn from(source: FrameError) -> Self {
        WorldError::Frame { index: 0, source }
    }
}
