//! Bodies: rigid sets of frames sharing one pose.

use super::pose::Pose;
use crate::frame::Frame;

/// Whether a body moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Motion {
    /// Never moves; never paired with other fixed bodies. Inserted into the
    /// broad phase once.
    Fixed,
    /// Translates by its velocity each step (and may be re-posed).
    Moving,
}

/// A rigid set of frames sharing one pose: what a [`World`](crate::World)
/// holds. Frames are given in body coordinates (their own velocities are
/// ignored: the body's velocity moves them).
///
/// ```
/// use fmbgrid::{Body, Frame3, Pose3};
/// let frames = vec![Frame3::from_aabb([0.0; 3], [1.0; 3])?];
/// let body = Body::moving(frames)
///     .with_pose(Pose3::from_translation([0.0, 5.0, 0.0])?)
///     .with_velocity([0.0, -2.0, 0.0])
///     .with_collision_filter(0b01, 0b10);
/// assert_eq!(body.frames().len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Body<const D: usize> {
    pub(crate) frames: Vec<Frame<D>>,
    pub(crate) motion: Motion,
    pub(crate) pose: Pose<D>,
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_impls::vector"))]
    pub(crate) velocity: [f64; D],
    pub(crate) groups: u32,
    pub(crate) mask: u32,
    pub(crate) user_data: u64,
    /// Radians per unit time about the body's reference point (the pose's
    /// translation); 2D uses the last coordinate only.
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) angular_velocity: [f64; 3],
}

impl<const D: usize> Body<D> {
    fn new(frames: Vec<Frame<D>>, motion: Motion) -> Self {
        Body {
            frames,
            motion,
            pose: Pose::IDENTITY,
            velocity: [0.0; D],
            groups: 1,
            mask: u32::MAX,
            user_data: 0,
            angular_velocity: [0.0; 3],
        }
    }

    /// A body that never moves.
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2, Motion};
    /// let b = Body::fixed(vec![Frame2::from_aabb([0.0; 2], [9.0, 1.0])?]);
    /// assert_eq!(b.motion(), Motion::Fixed);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn fixed(frames: impl Into<Vec<Frame<D>>>) -> Self {
        Self::new(frames.into(), Motion::Fixed)
    }

    /// A body that moves (at rest until given a velocity).
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2, Motion};
    /// let b = Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]);
    /// assert_eq!(b.motion(), Motion::Moving);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn moving(frames: impl Into<Vec<Frame<D>>>) -> Self {
        Self::new(frames.into(), Motion::Moving)
    }

    /// Places the body (default: the identity).
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2, Pose2};
    /// let b = Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]).with_pose(Pose2::from_translation([3.0, 0.0])?);
    /// assert_eq!(b.pose().translation(), [3.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_pose(mut self, pose: Pose<D>) -> Self {
        self.pose = pose;
        self
    }

    /// The velocity, in world units per unit time (checked on insertion).
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2};
    /// let b = Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]).with_velocity([1.0, 0.0]);
    /// assert_eq!(b.velocity(), [1.0, 0.0]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn with_velocity(mut self, velocity: [f64; D]) -> Self {
        self.velocity = velocity;
        self
    }

    /// Collision filtering: two bodies are paired only when each one's
    /// `groups` intersects the other's `mask` (default: group 1, mask all).
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2};
    /// let ghost = Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]).with_collision_filter(0, 0);
    /// assert_eq!(ghost.collision_filter(), (0, 0));
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn with_collision_filter(mut self, groups: u32, mask: u32) -> Self {
        self.groups = groups;
        self.mask = mask;
        self
    }

    /// The frames, in body coordinates.
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2};
    /// assert!(Body::<2>::fixed(vec![]).frames().is_empty());
    /// ```
    pub fn frames(&self) -> &[Frame<D>] {
        &self.frames
    }

    /// Fixed or moving.
    ///
    /// ```
    /// # use fmbgrid::{Body, Motion};
    /// assert_eq!(Body::<3>::moving(vec![]).motion(), Motion::Moving);
    /// ```
    pub fn motion(&self) -> Motion {
        self.motion
    }

    /// The current pose.
    ///
    /// ```
    /// # use fmbgrid::{Body, Pose3};
    /// assert_eq!(Body::<3>::moving(vec![]).pose(), Pose3::IDENTITY);
    /// ```
    pub fn pose(&self) -> Pose<D> {
        self.pose
    }

    /// The current velocity.
    ///
    /// ```
    /// # use fmbgrid::Body;
    /// assert_eq!(Body::<2>::fixed(vec![]).velocity(), [0.0, 0.0]);
    /// ```
    pub fn velocity(&self) -> [f64; D] {
        self.velocity
    }

    /// `(groups, mask)`, see [`Body::with_collision_filter`].
    ///
    /// ```
    /// # use fmbgrid::Body;
    /// assert_eq!(Body::<2>::fixed(vec![]).collision_filter(), (1, u32::MAX));
    /// ```
    pub fn collision_filter(&self) -> (u32, u32) {
        (self.groups, self.mask)
    }

    /// Attaches a number of yours to the body (default 0): an index into
    /// your own table, an entity id. The world keeps it and never reads
    /// it; [`World::user_data`](crate::World::user_data) and
    /// [`World::contact_user_data`](crate::World::contact_user_data) give
    /// it back (as rapier's `user_data` and Box2D's `userData` do).
    ///
    /// ```
    /// # use fmbgrid::Body;
    /// assert_eq!(Body::<2>::fixed(vec![]).with_user_data(42).user_data(), 42);
    /// ```
    pub fn with_user_data(mut self, data: u64) -> Self {
        self.user_data = data;
        self
    }

    /// The body's angular velocity, radians per unit time, as a rotation
    /// vector (2D: `[0, 0, ω]`). See [`Body::<3>::with_angular_velocity`](Body#impl-Body<3>).
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2};
    /// let b = Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]).with_angular_velocity(2.0);
    /// assert_eq!(b.angular_velocity(), [0.0, 0.0, 2.0]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn angular_velocity(&self) -> [f64; 3] {
        self.angular_velocity
    }

    /// The number attached by [`Body::with_user_data`].
    ///
    /// ```
    /// # use fmbgrid::Body;
    /// assert_eq!(Body::<2>::fixed(vec![]).user_data(), 0);
    /// ```
    pub fn user_data(&self) -> u64 {
        self.user_data
    }
}

impl<const D: usize> Body<D> {
    /// The angular velocity as a rotation vector in either dimension (2D:
    /// `[0, 0, ω]`), for code generic over the dimension.
    #[cfg_attr(not(feature = "mesh"), allow(dead_code))]
    pub(crate) fn with_turn(mut self, omega: [f64; 3]) -> Self {
        self.angular_velocity = omega;
        self
    }
}

impl Body<2> {
    /// Turns the body at `omega` radians per unit time (counter-clockwise
    /// when positive) about its reference point, the translation of its
    /// pose, while that point moves by the velocity. A step of `dt` then
    /// sweeps the frames through the turn by `omega · dt` (see
    /// [`Spin`](crate::Spin) for the motion, [`World::step`](crate::World::step)
    /// for what is reported) and the pose ends turned by it.
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2};
    /// let b = Body::moving(vec![Frame2::from_aabb([-1.0; 2], [1.0; 2])?]).with_angular_velocity(3.0);
    /// assert_eq!(b.angular_velocity()[2], 3.0);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn with_angular_velocity(mut self, omega: f64) -> Self {
        self.angular_velocity = [0.0, 0.0, omega];
        self
    }
}

impl Body<3> {
    /// Turns the body at `omega` (a rotation vector: axis times radians
    /// per unit time, right-handed) about its reference point, the
    /// translation of its pose, while that point moves by the velocity. A
    /// step of `dt` sweeps the frames through the turn by `omega · dt`
    /// (see [`Spin`](crate::Spin) for the motion) and the pose ends turned
    /// by it.
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame3};
    /// let b = Body::moving(vec![Frame3::from_aabb([-1.0; 3], [1.0; 3])?]).with_angular_velocity([0.0, 0.0, 6.0]);
    /// assert_eq!(b.angular_velocity(), [0.0, 0.0, 6.0]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn with_angular_velocity(mut self, omega: [f64; 3]) -> Self {
        self.angular_velocity = omega;
        self
    }
}
