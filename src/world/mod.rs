//! The world: bodies made of frames, stepped in time.
//!
//! `World::step` runs the whole pipeline (see `step.rs`): each moving frame's
//! box swept over the step → the hashed grid → candidate pairs (grid cells,
//! box overlap, body filters) → FMB on each candidate → contacts with their
//! exact boxes and intervals → body-pair events → the bodies advance.
//!
//! [`World`] keeps the bodies (slots and handles), the settings and the
//! public API; the work is done by its subsystems, each owning its data:
//! the broad phase (`broad_phase.rs`: the stores of placed frames and the
//! lists over them), the step's motion (`context.rs`: displacements and
//! turns by body rank, lent to each stage as a `StepContext`) and the
//! narrow phase (`narrow_phase.rs`: the candidate pass, FMB, contacts and
//! events). The other files add one feature each to `World`.

mod apart;
mod body;
mod broad_phase;
mod chunk;
mod contact_geometry;
mod context;
mod debug_draw;
mod exact_boxes;
mod narrow_phase;
mod pair_set;
mod pose;
mod profile;
mod proximity;
mod radix_sort;
mod range_check;
mod ray_cast;
mod resting;
mod runaway;
mod snapshot;
mod spin;
mod step;
mod store;
mod transfer;

pub use crate::ids::{BodyHandle, FrameId};
pub use body::{Body, Motion};
pub use debug_draw::{DebugKind, DebugLine};
#[cfg(feature = "cli")]
pub(crate) use debug_draw::{box_corner, edge_pairs};
pub use pose::{Pose, Pose2, Pose3, ROTATION_TOLERANCE};
pub use profile::StepProfile;
pub use proximity::Proximity;
pub use runaway::Runaway;
pub use snapshot::WorldSnapshot;
pub use spin::SPIN_TOLERANCE;
pub(crate) use spin::body_spin;
pub use step::StepRoom;
pub(crate) use transfer::Placed;

use crate::aabb::Aabb;
use crate::contact::{Contact, ContactDetail, ContactEvent};
use crate::error::WorldError;
use crate::frame::{Frame, MAX_COORDINATE};
use crate::grid::{CellSize, MAX_ITEMS};
use crate::narrow::{Intersection, intersect};
use broad_phase::BroadPhase;
use context::StepMotion;
use narrow_phase::NarrowPhase;
use store::Meta;

/// Settings of a [`World`].
///
/// ```
/// use fmbgrid::{ContactDetail, WorldConfig};
/// let auto = WorldConfig::default();
/// let manual = WorldConfig::default().with_cell_size(2.0);
/// assert_eq!(auto.cell_size, None);
/// assert_eq!(auto.detail, ContactDetail::ExactBox);
/// assert_eq!(manual.cell_size, Some(2.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct WorldConfig {
    /// Base cell size of the grid; `None` chooses it from the frames' sizes
    /// (twice their median extent), recomputed when fixed bodies change, or
    /// when moving bodies change in a world without fixed ones.
    pub cell_size: Option<f64>,
    /// What each contact carries (exact box by default).
    pub detail: ContactDetail,
    /// What a step does with a runaway body (parks it by default).
    pub runaway: Runaway,
    /// How close [`intersect_spinning`](crate::intersect_spinning) refines
    /// a pair with a spinning body (a length); `None`: [`SPIN_TOLERANCE`]
    /// of the larger frame's box.
    #[cfg_attr(feature = "serde", serde(default))]
    pub spin_tolerance: Option<f64>,
}

impl WorldConfig {
    /// Sets the base cell size by hand (ignored unless positive and finite).
    ///
    /// ```
    /// # use fmbgrid::WorldConfig;
    /// assert_eq!(WorldConfig::default().with_cell_size(0.5).cell_size, Some(0.5));
    /// ```
    pub fn with_cell_size(mut self, size: f64) -> Self {
        self.cell_size = Some(size);
        self
    }

    /// Sets what each contact carries.
    ///
    /// ```
    /// # use fmbgrid::{ContactDetail, WorldConfig};
    /// let config = WorldConfig::default().with_contact_detail(ContactDetail::Interval);
    /// assert_eq!(config.detail, ContactDetail::Interval);
    /// ```
    pub fn with_contact_detail(mut self, detail: ContactDetail) -> Self {
        self.detail = detail;
        self
    }

    /// Sets what a step does with a runaway body.
    ///
    /// ```
    /// # use fmbgrid::{Runaway, WorldConfig};
    /// assert_eq!(WorldConfig::default().runaway, Runaway::Park);
    /// assert_eq!(WorldConfig::default().with_runaway(Runaway::Refuse).runaway, Runaway::Refuse);
    /// ```
    pub fn with_runaway(mut self, runaway: Runaway) -> Self {
        self.runaway = runaway;
        self
    }

    /// Sets how close a pair with a spinning body is refined, a length
    /// (ignored unless positive and finite).
    ///
    /// ```
    /// # use fmbgrid::WorldConfig;
    /// assert_eq!(WorldConfig::default().with_spin_tolerance(1e-4).spin_tolerance, Some(1e-4));
    /// ```
    pub fn with_spin_tolerance(mut self, tolerance: f64) -> Self {
        self.spin_tolerance = Some(tolerance);
        self
    }
}

/// About what a step's buffers (cell lists, scratch, contacts) take per
/// frame, for [`World::try_reserve`]'s probe: `broad_phase_memory` measures
/// 74–253 bytes a frame on the benchmark scenes.
const STEP_BYTES_PER_FRAME: usize = 320;

/// A body, and where its placed frames are in the store of its motion.
#[derive(Clone, Debug)]
struct Stored<const D: usize> {
    body: Body<D>,
    at: Vec<u32>,
    /// The store holds the body's frames exactly as placing them at
    /// `body.pose` gives them (`placed_frame`), bit for bit: set where they
    /// are placed, cleared where they move otherwise (a step's displacement,
    /// a turn, frames copied in), false after a restore until compared.
    /// [`World::set_poses`] to the same pose then has nothing to compare;
    /// [`World::validate`] checks it.
    placed: bool,
}

#[derive(Clone, Debug)]
struct Slot<const D: usize> {
    generation: u32,
    stored: Option<Stored<D>>,
}

/// Bodies of frames and the broad phase over them. See the crate docs for
/// the pipeline; [`World::step`] is the per-step entry point.
///
/// ```
/// use fmbgrid::{Body, Frame3, Pose3, World3, WorldConfig};
/// let unit = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
/// let mut world = World3::new(WorldConfig::default());
/// let ground = world.insert(Body::fixed(vec![Frame3::from_aabb([-10.0, -1.0, -10.0], [10.0, 0.0, 10.0])?]))?;
/// let crate_ = world.insert(
///     Body::moving(vec![Frame3::cuboid([0.0; 3], unit)?])
///         .with_pose(Pose3::from_translation([0.0, 0.01, 0.0])?)
///         .with_velocity([0.0, -2.0, 0.0]),
/// )?;
/// let contacts = world.step(1.0 / 60.0)?; // sinks 0.033 into the ground
/// assert!((contacts[0].time[0] - 0.3).abs() < 1e-9);
/// assert_eq!(contacts.len(), 1);
/// assert_eq!((contacts[0].a.body, contacts[0].b.body), (ground, crate_));
/// world.set_velocity(crate_, [0.0; 3])?;
/// world.remove(crate_)?;
/// assert_eq!(world.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct World<const D: usize> {
    config: WorldConfig,
    /// The bodies by slot; a removed body's slot is listed in `free`, and
    /// reused with the next generation.
    slots: Vec<Slot<D>>,
    free: Vec<u32>,
    /// Live bodies: the slots holding one.
    len: usize,
    /// Moving bodies with an angular velocity (`spin.rs`).
    spinning: usize,
    /// The placed frames and the lists over them (`broad_phase.rs`).
    broad: BroadPhase<D>,
    /// The step's motion by moving body rank, kept after it (`context.rs`).
    motion: StepMotion<D>,
    /// The candidate pass's buffers and the step's results (`narrow_phase.rs`).
    narrow: NarrowPhase<D>,
    /// Answer buffer of [`World::pairs_within`].
    proximity: Vec<proximity::Proximity<D>>,
    /// Bodies parked by the last step, and the step's runaways as found.
    parked: Vec<BodyHandle>,
    runaways: Vec<runaway::Found>,
    /// What calling off a prepared step puts back (`step.rs`).
    undo: step::StepUndo<D>,
    /// Scratch of [`World::set_poses`]: the bodies' frames at their new
    /// poses, and which entries are known unchanged.
    placed: pose::Placing<D>,
    /// The last step's time by stage.
    profile: StepProfile,
}

/// A 2D world.
pub type World2 = World<2>;
/// A 3D world.
pub type World3 = World<3>;

/// True for a length a [`WorldConfig`] may set (cell size, spin
/// tolerance): positive and finite. [`World::new`] drops any other, and
/// [`World::restore`] refuses it (a world never keeps one).
pub(crate) fn valid_length(w: f64) -> bool {
    w > 0.0 && w.is_finite()
}

pub(crate) fn check_vector<const D: usize>(what: &'static str, v: &[f64; D]) -> Result<(), WorldError> {
    match v.iter().find(|x| !x.is_finite() || x.abs() > MAX_COORDINATE) {
        Some(&value) => Err(WorldError::BadNumber { what, value }),
        None => Ok(()),
    }
}

impl<const D: usize> World<D> {
    /// An empty world.
    ///
    /// ```
    /// use fmbgrid::{World2, WorldConfig};
    /// assert!(World2::new(WorldConfig::default()).is_empty());
    /// ```
    pub fn new(config: WorldConfig) -> Self {
        let () = Frame::<D>::SUPPORTED;
        // An invalid manual size is ignored once, here: automatic from then on.
        let config = WorldConfig {
            cell_size: config.cell_size.filter(|w| valid_length(*w)),
            spin_tolerance: config.spin_tolerance.filter(|w| valid_length(*w)),
            ..config
        };
        World {
            config,
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
            spinning: 0,
            broad: BroadPhase::new(CellSize::new(config.cell_size.unwrap_or(1.0))),
            motion: StepMotion::default(),
            narrow: NarrowPhase::default(),
            proximity: Vec::new(),
            parked: Vec::new(),
            runaways: Vec::new(),
            undo: step::StepUndo::default(),
            placed: pose::Placing::default(),
            profile: StepProfile::default(),
        }
    }

    /// Adds a body; its frames are placed at its pose.
    ///
    /// # Errors
    /// [`WorldError::EmptyBody`], [`WorldError::BadNumber`] (velocity),
    /// [`WorldError::FixedVelocity`] (a fixed body with a velocity),
    /// [`WorldError::Frame`] (a frame invalid once placed),
    /// [`WorldError::TooMany`].
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig, WorldError};
    /// let mut world = World2::new(WorldConfig::default());
    /// assert_eq!(world.insert(Body::fixed(vec![])), Err(WorldError::EmptyBody));
    /// let unit = Frame2::from_aabb([0.0; 2], [1.0; 2])?;
    /// let bad = Body::moving(vec![unit]).with_velocity([f64::NAN, 0.0]);
    /// assert!(matches!(world.insert(bad), Err(WorldError::BadNumber { .. })));
    /// assert!(world.is_empty());
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn insert(&mut self, mut body: Body<D>) -> Result<BodyHandle, WorldError> {
        let placed = self.admit(&mut body)?;
        let turns = body.angular_velocity != [0.0; 3];
        self.spinning += usize::from(turns);
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot { generation: 0, stored: None });
                (self.slots.len() - 1) as u32
            }
        };
        self.broad.changed(body.motion);
        let generation = self.slots[index as usize].generation;
        let store = self.broad.store_mut(body.motion);
        let at = placed
            .into_iter()
            .enumerate()
            .map(|(k, f)| {
                let meta =
                    Meta { slot: index, generation, frame: k as u32, groups: body.groups, mask: body.mask, rank: 0 };
                store.push(f, meta)
            })
            .collect();
        self.slots[index as usize].stored = Some(Stored { body, at, placed: true });
        self.len += 1;
        self.debug_validate();
        Ok(BodyHandle { index, generation })
    }

    /// The checks of [`World::insert`], without inserting: the body's
    /// frames placed at its pose (its frames' own velocities dropped: the
    /// body's replace them), or the error `insert` would give.
    pub(crate) fn admit(&self, body: &mut Body<D>) -> Result<Vec<Frame<D>>, WorldError> {
        if body.frames.is_empty() {
            return Err(WorldError::EmptyBody);
        }
        let frames = self.broad.store(body.motion).len() + body.frames.len();
        if frames > MAX_ITEMS || (self.free.is_empty() && self.slots.len() >= u32::MAX as usize) {
            return Err(WorldError::TooMany);
        }
        check_vector("velocity", &body.velocity)?;
        check_vector("angular velocity", &body.angular_velocity)?;
        for f in &mut body.frames {
            // Frame velocities are replaced by the body's.
            if f.is_moving() {
                *f = Frame::new(f.kind(), f.origin(), f.components())?;
            }
        }
        let placed = place(body)?;
        let turns = body.angular_velocity != [0.0; 3];
        if body.motion == Motion::Fixed && (body.velocity != [0.0; D] || turns) {
            return Err(WorldError::FixedVelocity);
        }
        Ok(placed)
    }

    /// Reserves room for `bodies` more bodies of `motion` with `frames`
    /// frames in all, so that inserting them does not fail to allocate the
    /// world's own arrays; a loader calls it before a large batch, to get a
    /// clear error instead of an abort when memory runs out. The memory the
    /// bodies' own frame lists and a step's buffers will take (about
    /// `STEP_BYTES_PER_FRAME` more a frame) is allocated once as a probe and
    /// given back: on a system that refuses what it cannot provide (an
    /// address-space limit, no overcommit), that is a clear error too.
    ///
    /// # Errors
    /// [`WorldError::TooMany`] past the world's limits,
    /// [`WorldError::OutOfMemory`] when the memory cannot be had; the world
    /// is unchanged (but for capacity) either way.
    ///
    /// ```
    /// use fmbgrid::{Motion, World3, WorldConfig, WorldError};
    /// let mut world = World3::new(WorldConfig::default());
    /// world.try_reserve(Motion::Moving, 1000, 1000)?;
    /// assert_eq!(world.try_reserve(Motion::Fixed, 10, 1 << 27), Err(WorldError::TooMany));
    /// # Ok::<(), WorldError>(())
    /// ```
    pub fn try_reserve(&mut self, motion: Motion, bodies: usize, frames: usize) -> Result<(), WorldError> {
        let total = self.broad.store(motion).len().checked_add(frames);
        let slots = self.slots.len().checked_add(bodies.saturating_sub(self.free.len()));
        if total.is_none_or(|n| n > MAX_ITEMS) || slots.is_none_or(|n| n > u32::MAX as usize) {
            return Err(WorldError::TooMany);
        }
        let bytes = bodies
            .saturating_mul(size_of::<Slot<D>>())
            .saturating_add(frames.saturating_mul(size_of::<Frame<D>>() + size_of::<Meta>()));
        let oom = |_| WorldError::OutOfMemory { bytes };
        self.slots.try_reserve(bodies.saturating_sub(self.free.len())).map_err(oom)?;
        let store = self.broad.store_mut(motion);
        store.frames.try_reserve(frames).map_err(oom)?;
        store.meta.try_reserve(frames).map_err(oom)?;
        let later = frames.saturating_mul(size_of::<Frame<D>>() + size_of::<u32>() + STEP_BYTES_PER_FRAME);
        let mut probe: Vec<u8> = Vec::new();
        probe.try_reserve_exact(later).map_err(|_| WorldError::OutOfMemory { bytes: bytes.saturating_add(later) })?;
        Ok(())
    }

    /// Removes a body and returns it.
    ///
    /// # Errors
    /// [`WorldError::StaleHandle`].
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let h = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// assert_eq!(world.remove(h)?.frames().len(), 1);
    /// assert!(world.remove(h).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove(&mut self, handle: BodyHandle) -> Result<Body<D>, WorldError> {
        self.stored(handle)?;
        let slot = &mut self.slots[handle.index as usize];
        // Present: checked just above.
        let stored = slot.stored.take().ok_or(WorldError::StaleHandle(handle))?;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(handle.index);
        self.len -= 1;
        self.spinning -= usize::from(stored.body.angular_velocity != [0.0; 3]);
        self.broad.changed(stored.body.motion);
        let store = self.broad.store_mut(stored.body.motion);
        for &i in &stored.at {
            store.kill(i);
        }
        self.debug_validate();
        Ok(stored.body)
    }

    /// Sets a moving body's velocity (world units per unit time), used from
    /// the next step on.
    ///
    /// # Errors
    /// [`WorldError::StaleHandle`], [`WorldError::BadNumber`],
    /// [`WorldError::FixedBody`].
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let h = world.insert(Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// world.set_velocity(h, [1.0, 0.0])?;
    /// world.step(0.5)?;
    /// assert_eq!(world.body(h)?.pose().translation(), [0.5, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_velocity(&mut self, handle: BodyHandle, velocity: [f64; D]) -> Result<(), WorldError> {
        check_vector("velocity", &velocity)?;
        let stored = self.stored_mut(handle)?;
        if stored.body.motion == Motion::Fixed {
            return Err(WorldError::FixedBody(handle));
        }
        self.write_velocity(handle, velocity);
        self.narrow.motion_set();
        Ok(())
    }

    /// Writes moving body `h`'s velocity (a live handle: checked by the
    /// caller), and its copy by rank (`StepMotion::velocities`): the one
    /// place a live body's velocity changes.
    pub(super) fn write_velocity(&mut self, h: BodyHandle, velocity: [f64; D]) {
        if let Ok(stored) = self.stored_mut(h) {
            stored.body.velocity = velocity;
            self.motion.velocity_set(self.broad.rank_of(h.index), velocity);
        }
    }

    /// Moves a body to `pose` (teleport, or kinematic driving), effective at
    /// the start of the next step. Rotation is not swept: the step tests
    /// the frames at their poses, translating by the velocity. Re-posing a
    /// fixed body rebuilds the static part of the broad phase at the next
    /// step; a moving body left at the very same pose is left alone (see
    /// [`World::set_poses`], of which this is the one-body case).
    ///
    /// # Errors
    /// [`WorldError::StaleHandle`], [`WorldError::Frame`] (a frame becomes
    /// invalid at that pose).
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, Pose2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let h = world.insert(Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// world.set_pose(h, Pose2::from_angle(0.3, [5.0, 5.0])?)?;
    /// assert!(world.frame(fmbgrid::FrameId { body: h, index: 0 })?.aabb().min[1] > 4.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_pose(&mut self, handle: BodyHandle, pose: Pose<D>) -> Result<(), WorldError> {
        // One body of `set_poses`: every frame placed before anything
        // changes, in a buffer kept between calls (no allocation once warm).
        self.set_poses(&[(handle, pose)])
    }

    /// The body behind a handle.
    ///
    /// # Errors
    /// [`WorldError::StaleHandle`].
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2, Motion, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let h = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// assert_eq!(world.body(h)?.motion(), Motion::Fixed);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn body(&self, handle: BodyHandle) -> Result<&Body<D>, WorldError> {
        Ok(&self.stored(handle)?.body)
    }

    /// The number attached to a body ([`Body::with_user_data`]).
    ///
    /// # Errors
    /// [`WorldError::StaleHandle`].
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let h = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]).with_user_data(7))?;
    /// assert_eq!(world.user_data(h)?, 7);
    /// world.set_user_data(h, 8)?;
    /// assert_eq!(world.user_data(h)?, 8);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn user_data(&self, handle: BodyHandle) -> Result<u64, WorldError> {
        Ok(self.stored(handle)?.body.user_data)
    }

    /// Replaces the number attached to a body; nothing else changes.
    ///
    /// # Errors
    /// [`WorldError::StaleHandle`].
    pub fn set_user_data(&mut self, handle: BodyHandle, data: u64) -> Result<(), WorldError> {
        self.stored_mut(handle)?.body.user_data = data;
        Ok(())
    }

    /// The numbers attached to the bodies of a contact's two frames, `(a,
    /// b)`: a contact names frames, whose bodies carry the user data, so
    /// contacts stay small and the look-up is two array reads.
    ///
    /// # Errors
    /// [`WorldError::StaleHandle`] when a body was removed since the step.
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, 0.0], [9.0, 1.0])?]).with_user_data(100))?;
    /// world.insert(Body::moving(vec![Frame2::from_aabb([1.0, 0.5], [2.0, 1.5])?]).with_user_data(200))?;
    /// let c = world.step(0.1)?[0];
    /// assert_eq!(world.contact_user_data(&c)?, (100, 200));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn contact_user_data(&self, contact: &Contact<D>) -> Result<(u64, u64), WorldError> {
        Ok((self.user_data(contact.a.body)?, self.user_data(contact.b.body)?))
    }

    /// A frame placed in the world (at rest, at its body's current pose).
    ///
    /// # Errors
    /// [`WorldError::StaleHandle`], [`WorldError::NoSuchFrame`].
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2, FrameId, Pose2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let body = Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]).with_pose(Pose2::from_translation([2.0, 0.0])?);
    /// let h = world.insert(body)?;
    /// assert_eq!(world.frame(FrameId { body: h, index: 0 })?.origin(), [2.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn frame(&self, id: FrameId) -> Result<Frame<D>, WorldError> {
        let stored = self.stored(id.body)?;
        let at = stored.at.get(id.index as usize).ok_or(WorldError::NoSuchFrame { body: id.body, index: id.index })?;
        Ok(self.broad.store(stored.body.motion).frames[*at as usize])
    }

    /// Number of bodies.
    ///
    /// ```
    /// # use fmbgrid::{World3, WorldConfig};
    /// assert_eq!(World3::new(WorldConfig::default()).len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is no body.
    ///
    /// ```
    /// # use fmbgrid::{World3, WorldConfig};
    /// assert!(World3::new(WorldConfig::default()).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes every body; all existing handles become stale.
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let h = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// world.clear();
    /// assert!(world.is_empty() && world.body(h).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn clear(&mut self) {
        let live: Vec<BodyHandle> = self.bodies().map(|(h, _)| h).collect();
        for h in live {
            // Live: just listed.
            let _ = self.remove(h);
        }
        self.narrow.clear();
        self.parked.clear();
    }

    /// The bodies and their handles, in slot order.
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let h = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// assert_eq!(world.bodies().map(|(h, _)| h).collect::<Vec<_>>(), [h]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bodies(&self) -> impl Iterator<Item = (BodyHandle, &Body<D>)> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.stored.as_ref().map(|st| (BodyHandle { index: i as u32, generation: s.generation }, &st.body))
        })
    }

    /// The contacts of the last step.
    ///
    /// ```
    /// # use fmbgrid::{World2, WorldConfig};
    /// assert!(World2::new(WorldConfig::default()).contacts().is_empty());
    /// ```
    pub fn contacts(&self) -> &[Contact<D>] {
        &self.narrow.contacts
    }

    /// The pairs of bodies in contact during the last step, sorted, each
    /// once (body-level pairs).
    ///
    /// ```
    /// # use fmbgrid::{World2, WorldConfig};
    /// assert!(World2::new(WorldConfig::default()).body_pairs().is_empty());
    /// ```
    pub fn body_pairs(&self) -> &[(BodyHandle, BodyHandle)] {
        &self.narrow.pairs
    }

    /// Body pairs that started or ended touching at the last step, sorted.
    ///
    /// ```
    /// use fmbgrid::{Body, ContactEvent, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let wall = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// let ball = world.insert(Body::moving(vec![Frame2::from_aabb([0.5; 2], [1.5; 2])?]).with_velocity([10.0, 0.0]))?;
    /// world.step(0.1)?;
    /// assert_eq!(world.events(), [ContactEvent::Started(wall, ball)]);
    /// world.step(0.1)?; // now far away
    /// assert_eq!(world.events(), [ContactEvent::Ended(wall, ball)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn events(&self) -> &[ContactEvent] {
        &self.narrow.events
    }

    /// The frames whose (placed, at rest) boxes overlap `aabb`, closed test,
    /// sorted by id; none for an empty box (`min > max` on some axis). Uses
    /// the fixed frames' cell list when it is up to date (after a step), and
    /// the step's moving list until a moving body is inserted, removed or
    /// re-posed (its swept boxes contain the frames' boxes now); else it
    /// tests every frame. About 0.15 µs a small query after a step at 100k
    /// moving frames, against 156 µs testing them all (`cargo bench --bench
    /// world -- query_aabb`).
    ///
    /// ```
    /// use fmbgrid::{Aabb, Body, Frame2, FrameId, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let h = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// let found = world.query_aabb(&Aabb { min: [0.5, 0.5], max: [3.0, 3.0] });
    /// assert_eq!(found, [FrameId { body: h, index: 0 }]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_aabb(&self, aabb: &Aabb<D>) -> Vec<FrameId> {
        let mut out = Vec::new();
        if aabb.is_empty() {
            return out;
        }
        self.broad.query_box(aabb, &mut out);
        out.sort_unstable();
        out
    }

    /// The frames that intersect `frame` (placed frames taken at rest;
    /// `frame` may move), with the exact boxes and intervals, sorted by id.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// let probe = Frame2::from_aabb([0.5, 0.5], [2.0, 2.0])?;
    /// let hits = world.query_frame(&probe);
    /// assert_eq!(hits.len(), 1);
    /// assert_eq!(hits[0].1.aabb.max, [1.0, 1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_frame(&self, frame: &Frame<D>) -> Vec<(FrameId, Intersection<D>)> {
        self.query_aabb(&frame.aabb())
            .into_iter()
            .filter_map(|id| {
                // Listed by `query_aabb` from live bodies: the look-up succeeds.
                let placed = self.frame(id).ok()?;
                intersect(frame, &placed).map(|hit| (id, hit))
            })
            .collect()
    }

    /// The settings the world was made with (an invalid manual cell size
    /// already dropped).
    ///
    /// ```
    /// # use fmbgrid::{ContactDetail, World2, WorldConfig};
    /// let world = World2::new(WorldConfig::default().with_contact_detail(ContactDetail::Candidates));
    /// assert_eq!(world.config().detail, ContactDetail::Candidates);
    /// assert_eq!(World2::new(WorldConfig::default().with_cell_size(-1.0)).config().cell_size, None);
    /// ```
    pub fn config(&self) -> WorldConfig {
        self.config
    }

    /// The base cell size of the grid in use (set by hand, or chosen from
    /// the frames' sizes at the last step).
    ///
    /// ```
    /// # use fmbgrid::{World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default().with_cell_size(3.0));
    /// world.step(0.0)?;
    /// assert_eq!(world.cell_size(), 3.0);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn cell_size(&self) -> f64 {
        self.broad.cell.base()
    }

    /// How long each stage of the last step took ([`StepProfile`]).
    ///
    /// ```
    /// # use fmbgrid::{World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.step(0.1)?;
    /// assert!(world.profile().total >= world.profile().narrow);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn profile(&self) -> StepProfile {
        self.profile
    }

    /// Bytes held by the broad phase (grids and flat frame lists), for the
    /// memory budget; excludes the bodies and frames themselves.
    ///
    /// ```
    /// # use fmbgrid::{World2, WorldConfig};
    /// assert!(World2::new(WorldConfig::default()).broad_phase_memory() < 1024);
    /// ```
    pub fn broad_phase_memory(&self) -> usize {
        self.broad.memory()
            + self.proximity.capacity() * size_of::<proximity::Proximity<D>>()
            + (self.motion.shifts.capacity() + self.motion.next_shifts.capacity()) * size_of::<[f64; D]>()
    }

    fn stored(&self, h: BodyHandle) -> Result<&Stored<D>, WorldError> {
        match self.slots.get(h.index as usize) {
            Some(Slot { generation, stored: Some(s) }) if *generation == h.generation => Ok(s),
            _ => Err(WorldError::StaleHandle(h)),
        }
    }

    fn stored_mut(&mut self, h: BodyHandle) -> Result<&mut Stored<D>, WorldError> {
        match self.slots.get_mut(h.index as usize) {
            Some(Slot { generation, stored: Some(s) }) if *generation == h.generation => Ok(s),
            _ => Err(WorldError::StaleHandle(h)),
        }
    }

    fn generation(&self, slot: u32) -> u32 {
        self.slots[slot as usize].generation
    }

    /// [`World::validate`], in debug builds only.
    #[inline(always)]
    fn debug_validate(&self) {
        #[cfg(debug_assertions)]
        self.validate();
    }

    /// Whether the last step read its moving frames' candidate pairs off
    /// the pairs kept from the steps before (frames at rest) rather than
    /// the pairs pass: the answers are the same either way; for tests.
    #[doc(hidden)]
    pub fn kept_pairs_used(&self) -> bool {
        self.broad.kept_pairs_used()
    }

    /// Whether the last step gave the step before's results again because
    /// nothing moved, nothing changed and nothing moves
    /// (`NarrowPhase::can_repeat`): the answers are the same either way;
    /// for tests.
    #[doc(hidden)]
    pub fn step_repeated(&self) -> bool {
        self.narrow.repeated
    }

    /// How many of the last step's contacts it took from the step before
    /// (their two frames at rest) instead of running FMB again: the answers
    /// are the same either way; for tests.
    #[doc(hidden)]
    pub fn resting_contacts_used(&self) -> usize {
        self.narrow.resting_contacts_used()
    }

    /// Panics unless the invariants the world and its subsystems state on
    /// their fields hold: the slots and their count, every body's frames
    /// where it says they are, the broad phase's lists and ranks, and the
    /// contacts naming live frames while current. Linear in the frames:
    /// run after every step and change in debug builds.
    #[doc(hidden)]
    pub fn validate(&self) {
        assert_eq!(self.len, self.slots.iter().filter(|s| s.stored.is_some()).count(), "live body count");
        assert!(self.free.iter().all(|&i| self.slots[i as usize].stored.is_none()), "a free slot holds a body");
        let mut spinning = 0;
        for (slot, s) in self.slots.iter().enumerate() {
            let Some(st) = &s.stored else { continue };
            spinning += usize::from(st.body.motion == Motion::Moving && st.body.angular_velocity != [0.0; 3]);
            assert_eq!(st.at.len(), st.body.frames.len(), "one placed frame a body frame");
            let store = self.broad.store(st.body.motion);
            for (k, &i) in st.at.iter().enumerate() {
                let m = store.meta[i as usize];
                assert_eq!((m.slot, m.generation, m.frame), (slot as u32, s.generation, k as u32), "frame placement");
            }
            if st.placed {
                let placed = place(&st.body).expect("frames marked placed were placed at this pose");
                let stored = st.at.iter().map(|&i| &store.frames[i as usize]);
                assert!(placed.iter().zip(stored).all(|(p, f)| pose::same_frame(p, f)), "frames marked placed moved");
            }
        }
        assert_eq!(spinning, self.spinning, "spinning bodies");
        self.broad.validate(self.slots.len());
        self.motion.range.validate(self.broad.edits(), &self.broad.moving.frames);
        let bodies = &self.broad.moving_bodies;
        if self.broad.is_fresh(Motion::Moving) && self.motion.velocities_current(self.broad.ranks_made(), bodies.len())
        {
            for (v, &slot) in self.motion.velocities.iter().zip(bodies) {
                let body = &self.slots[slot as usize].stored.as_ref().expect("a ranked body lives").body;
                assert_eq!(v.map(f64::to_bits), body.velocity.map(f64::to_bits), "the velocities' copy follows");
            }
        }
        if self.narrow.is_current(&self.broad) {
            let named = |id: FrameId| self.frame(id).is_ok();
            assert!(self.narrow.contacts.iter().all(|c| named(c.a) && named(c.b)), "contacts name live frames");
        }
    }
}

/// True when `h` names a live body of `slots`.
fn live<const D: usize>(slots: &[Slot<D>], h: BodyHandle) -> bool {
    matches!(slots.get(h.index as usize), Some(Slot { generation, stored: Some(_) }) if *generation == h.generation)
}

/// The body's frames placed at its pose.
fn place<const D: usize>(body: &Body<D>) -> Result<Vec<Frame<D>>, WorldError> {
    body.frames.iter().enumerate().map(|(index, f)| placed_frame(&body.pose, f, index)).collect()
}

/// Frame `index` of a body, `f`, placed at `pose`.
fn placed_frame<const D: usize>(pose: &Pose<D>, f: &Frame<D>, index: usize) -> Result<Frame<D>, WorldError> {
    pose.transform_frame(f).map_err(|e| match e {
        WorldError::Frame { source, .. } => WorldError::Frame { index, source },
        other => other,
    })
}
