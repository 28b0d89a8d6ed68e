//! What the world reports each step: contacts between frames, and started /
//! ended events between bodies.

use crate::aabb::Aabb;
use crate::world::{BodyHandle, FrameId};

/// Two frames that intersect during a step.
///
/// `a < b` always; the box and the interval are those of
/// [`intersect`](crate::intersect) for the two frames over the step.
///
/// ```
/// use fmbgrid::{Body, Frame3, World3, WorldConfig};
/// let unit = Frame3::from_aabb([0.0; 3], [1.0; 3])?;
/// let mut world = World3::new(WorldConfig::default());
/// let floor = world.insert(Body::fixed(vec![unit]))?;
/// let ball = world.insert(Body::moving(vec![Frame3::from_aabb([0.5; 3], [1.5; 3])?]))?;
/// let contacts = world.step(0.1)?;
/// assert_eq!(contacts.len(), 1);
/// assert_eq!((contacts[0].a.body, contacts[0].b.body), (floor, ball));
/// assert_eq!(contacts[0].aabb.min, [0.5; 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact<const D: usize> {
    /// The smaller frame id of the pair.
    pub a: FrameId,
    /// The larger frame id of the pair.
    pub b: FrameId,
    /// Exact world box of the intersection, swept over the contact interval.
    pub aabb: Aabb<D>,
    /// `[t_enter, t_exit]` as fractions of the step.
    pub time: [f64; 2],
}

/// A change in which bodies touch, between one step and the next.
///
/// Pairs are ordered (`first < second`). A body that is removed simply
/// stops appearing: no `Ended` event is reported for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ContactEvent {
    /// The bodies touch in this step and did not in the previous one.
    Started(BodyHandle, BodyHandle),
    /// The bodies touched in the previous step and no longer do.
    Ended(BodyHandle, BodyHandle),
}
