//! What the world reports each step: contacts between frames, and started /
//! ended events between bodies.

use crate::aabb::Aabb;
use crate::ids::{BodyHandle, FrameId};

/// What each contact of [`World::step`](crate::World::step) carries, and so
/// what a step costs: most of a step is spent on the exact boxes.
///
/// ```
/// use fmbgrid::{Body, ContactDetail, Frame2, World2, WorldConfig};
/// let config = WorldConfig::default().with_contact_detail(ContactDetail::Interval);
/// let mut world = World2::new(config);
/// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [2.0; 2])?]))?;
/// world.insert(Body::moving(vec![Frame2::from_aabb([1.0; 2], [3.0; 2])?]))?;
/// let contacts = world.step(0.1)?;
/// assert_eq!(contacts[0].time, [0.0, 1.0]); // exact, decided by FMB
/// assert_eq!(contacts[0].aabb.max, [2.0, 2.0]); // the boxes' overlap: here exact too
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ContactDetail {
    /// FMB decides every pair; each contact carries the exact box of the
    /// intersection swept over the step and the exact contact interval
    /// ([`intersect`](crate::intersect)).
    #[default]
    ExactBox,
    /// FMB decides every pair; each contact carries the exact contact
    /// interval ([`overlap_interval`](crate::overlap_interval)) and, as its
    /// box, the overlap of the two frames' swept boxes: a superset of the
    /// exact box (up to the exact box's own round-off, an ulp or so), which
    /// [`World::exact_boxes`](crate::World::exact_boxes) computes afterwards
    /// for the contacts asked about.
    Interval,
    /// No narrow phase: every pair of frames whose swept boxes overlap (the
    /// broad phase's candidates, closed test), with the boxes' overlap and
    /// the whole step `[0, 1]` as interval. For users who run their own
    /// narrow phase, and to measure the broad phase alone.
    Candidates,
}

/// Two frames that intersect during a step.
///
/// `a < b` always; with the default [`ContactDetail::ExactBox`], the box and
/// the interval are those of [`intersect`](crate::intersect) for the two
/// frames over the step (see [`ContactDetail`] for the other modes).
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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Contact<const D: usize> {
    /// The smaller frame id of the pair.
    pub a: FrameId,
    /// The larger frame id of the pair.
    pub b: FrameId,
    /// Exact world box of the intersection, swept over the contact interval
    /// (a superset of it in the cheaper [`ContactDetail`] modes). For a
    /// pair with a turning body, exact boxes are out of reach: the box of
    /// [`intersect_spinning`](crate::intersect_spinning) with the world's
    /// spin tolerance `τ`, in both the `ExactBox` and `Interval` modes. It
    /// contains every point of the intersection at every instant of the
    /// contact (never smaller than the true box), never reaches beyond the
    /// overlap of the two frames' own swept boxes over `time`, and is
    /// refined, within a bounded work per pair, until each face is within
    /// `τ` of the true box (the box of the intersection over every instant
    /// of the contact: for a crate tumbling into a floor, the box of the
    /// part of the crate inside the floor, over all the instants of the
    /// step it is there). Measured on random pairs of
    /// turns from 0.01 to 3 rad a step, every box in 2D and in 3D reaches
    /// `τ`, with the proof flag set; a box not refined within the bound
    /// (faces set by features of very thin frames, whose bounds hold
    /// only over very short pieces) is looser on some face (see
    /// [`SpinContact`](crate::SpinContact), whose `box_within_tolerance`
    /// tells which).
    pub aabb: Aabb<D>,
    /// `[t_enter, t_exit]` as fractions of the step.
    pub time: [f64; 2],
}

/// A change in which bodies touch, between one step and the next.
///
/// Pairs are ordered (`first < second`). A body that is removed simply
/// stops appearing: no `Ended` event is reported for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ContactEvent {
    /// The bodies touch in this step and did not in the previous one.
    Started(BodyHandle, BodyHandle),
    /// The bodies touched in the previous step and no longer do.
    Ended(BodyHandle, BodyHandle),
}
