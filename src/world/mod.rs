//! The world: bodies made of frames, stepped in time.
//!
//! `World::step` runs the whole pipeline (see `step.rs`): each moving frame's
//! box swept over the step → the hashed grid → candidate pairs (grid cells,
//! box overlap, body filters) → FMB on each candidate → contacts with their
//! exact boxes and intervals → body-pair events → the bodies advance.

mod apart;
mod body;
mod contact_geometry;
mod debug_draw;
mod exact_boxes;
mod pose;
mod proximity;
mod ray_cast;
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
pub use pose::{Pose, Pose2, Pose3};
pub use proximity::Proximity;
pub use runaway::Runaway;
pub use snapshot::WorldSnapshot;
pub use spin::SPIN_TOLERANCE;
pub(crate) use spin::body_spin;
pub(crate) use transfer::Placed;

use crate::aabb::Aabb;
use crate::contact::{Contact, ContactDetail, ContactEvent};
use crate::error::WorldError;
use crate::frame::{Frame, MAX_COORDINATE};
use crate::grid::{CellList, CellSize, MAX_ITEMS, NearLists, cell_size_for};
use crate::narrow::{Intersection, intersect};
use store::{Meta, Store};

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
    slots: Vec<Slot<D>>,
    free: Vec<u32>,
    len: usize,
    /// False when fixed bodies changed: the fixed store's order, the cell
    /// size and the static grid must be rebuilt before the next step.
    fixed_fresh: bool,
    /// False when moving bodies were inserted or removed.
    moving_fresh: bool,
    cell: CellSize,
    fixed: Store<D>,
    static_grid: CellList<D>,
    moving: Store<D>,
    /// The moving bodies' slots by rank: slot order after a refresh, the
    /// order of their frames in the store after a re-sort.
    moving_bodies: Vec<u32>,
    /// The inverse: per slot, the rank of its moving body, or `u32::MAX`.
    slot_rank: Vec<u32>,
    moving_grid: CellList<D>,
    /// Per moving frame (store index), the fixed frames' slots near it;
    /// cleared whenever the fixed list changes.
    near_fixed: NearLists<D>,
    /// Candidate pairs FMB found apart, and the moving bodies' odometers
    /// (`apart.rs`); `apart_stale` when store indices or ranks changed.
    apart: apart::ApartPairs,
    apart_stale: bool,
    /// Scratch of [`World::pairs_within`]: the moving frames' grown boxes,
    /// and the answer.
    proximity_grid: CellList<D>,
    proximity: Vec<proximity::Proximity<D>>,
    /// The moving frames that enter the grid (store indices).
    active: Vec<u32>,
    /// Per moving body (by rank): frame count; the largest; swept boxes and
    /// their grid (only built when some body is large).
    body_frames: Vec<u32>,
    largest_body: u32,
    body_boxes: Vec<Aabb<D>>,
    /// Per large body (by rank): the bodies its box reaches, as
    /// `body_links[body_link_starts[r]..body_link_starts[r + 1]]`, and the
    /// fixed frames, likewise (see `step.rs`).
    body_links: Vec<u32>,
    body_link_starts: Vec<u32>,
    body_fixed: Vec<u32>,
    body_fixed_starts: Vec<u32>,
    body_grid: CellList<D>,
    /// Steps since the moving store was last put back in spatial order.
    unsorted_steps: u32,
    /// Old rank → new rank, while the moving bodies are re-ranked.
    rank_scratch: Vec<u32>,
    /// Per moving body (as `moving_bodies`): its displacement over the step.
    body_shift: Vec<[f64; D]>,
    /// The next step's displacements while they are checked.
    next_shift: Vec<[f64; D]>,
    chunks: Vec<step::Chunk<D>>,
    contacts: Vec<Contact<D>>,
    pairs: Vec<(BodyHandle, BodyHandle)>,
    /// Scratch of the body pairs' sort.
    pair_keys: Vec<u64>,
    previous: Vec<(BodyHandle, BodyHandle)>,
    events: Vec<ContactEvent>,
    /// True from a step until bodies are inserted, removed or re-posed:
    /// the contacts still name the frames as stored.
    contacts_current: bool,
    scratch: Vec<f64>,
    /// Bodies parked by the last step, and the step's runaways as found.
    parked: Vec<BodyHandle>,
    runaways: Vec<runaway::Found>,
    /// Moving bodies with an angular velocity (`spin.rs`), the time
    /// step being taken, and the last step's turns with the spinning
    /// bodies' frames at its start.
    spinning: usize,
    step_dt: f64,
    turns: hashbrown::HashMap<BodyHandle, crate::narrow::Spin<D>>,
    /// The step's turns by moving body rank; empty when no body turns.
    rank_spins: Vec<Option<crate::narrow::Spin<D>>>,
    turned_frames: hashbrown::HashMap<FrameId, Frame<D>>,
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
            fixed_fresh: true,
            moving_fresh: true,
            cell: CellSize::new(config.cell_size.unwrap_or(1.0)),
            fixed: Store::default(),
            static_grid: CellList::default(),
            moving: Store::default(),
            moving_bodies: Vec::new(),
            slot_rank: Vec::new(),
            moving_grid: CellList::default(),
            near_fixed: NearLists::default(),
            apart: apart::ApartPairs::default(),
            apart_stale: true,
            proximity_grid: CellList::default(),
            proximity: Vec::new(),
            active: Vec::new(),
            body_frames: Vec::new(),
            largest_body: 0,
            body_boxes: Vec::new(),
            body_links: Vec::new(),
            body_link_starts: Vec::new(),
            body_fixed: Vec::new(),
            body_fixed_starts: Vec::new(),
            body_grid: CellList::default(),
            unsorted_steps: 0,
            rank_scratch: Vec::new(),
            body_shift: Vec::new(),
            next_shift: Vec::new(),
            chunks: Vec::new(),
            contacts: Vec::new(),
            pairs: Vec::new(),
            pair_keys: Vec::new(),
            previous: Vec::new(),
            events: Vec::new(),
            contacts_current: false,
            scratch: Vec::new(),
            parked: Vec::new(),
            runaways: Vec::new(),
            spinning: 0,
            step_dt: 0.0,
            turns: hashbrown::HashMap::new(),
            rank_spins: Vec::new(),
            turned_frames: hashbrown::HashMap::new(),
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
        self.mark_changed(body.motion);
        let generation = self.slots[index as usize].generation;
        let store = self.store_mut(body.motion);
        let at = placed
            .into_iter()
            .enumerate()
            .map(|(k, f)| {
                let meta =
                    Meta { slot: index, generation, frame: k as u32, groups: body.groups, mask: body.mask, rank: 0 };
                store.push(f, meta)
            })
            .collect();
        self.slots[index as usize].stored = Some(Stored { body, at });
        self.len += 1;
        Ok(BodyHandle { index, generation })
    }

    /// The checks of [`World::insert`], without inserting: the body's
    /// frames placed at its pose (its frames' own velocities dropped: the
    /// body's replace them), or the error `insert` would give.
    pub(crate) fn admit(&self, body: &mut Body<D>) -> Result<Vec<Frame<D>>, WorldError> {
        if body.frames.is_empty() {
            return Err(WorldError::EmptyBody);
        }
        let frames = self.store(body.motion).len() + body.frames.len();
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
        let total = self.store(motion).len().checked_add(frames);
        let slots = self.slots.len().checked_add(bodies.saturating_sub(self.free.len()));
        if total.is_none_or(|n| n > MAX_ITEMS) || slots.is_none_or(|n| n > u32::MAX as usize) {
            return Err(WorldError::TooMany);
        }
        let bytes = bodies
            .saturating_mul(size_of::<Slot<D>>())
            .saturating_add(frames.saturating_mul(size_of::<Frame<D>>() + size_of::<Meta>()));
        let oom = |_| WorldError::OutOfMemory { bytes };
        self.slots.try_reserve(bodies.saturating_sub(self.free.len())).map_err(oom)?;
        let store = self.store_mut(motion);
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
        self.mark_changed(stored.body.motion);
        let store = self.store_mut(stored.body.motion);
        for &i in &stored.at {
            store.kill(i);
        }
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
        stored.body.velocity = velocity;
        Ok(())
    }

    /// Moves a body to `pose` (teleport, or kinematic driving), effective at
    /// the start of the next step. Rotation is not swept: the step tests
    /// the frames at their poses, translating by the velocity. Re-posing a
    /// fixed body rebuilds the static part of the broad phase at the next
    /// step.
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
        let stored = self.stored(handle)?;
        let mut body = stored.body.clone();
        body.pose = pose;
        let placed = place(&body)?;
        let motion = body.motion;
        let stored = self.stored_mut(handle)?;
        stored.body.pose = pose;
        let at = stored.at.clone();
        let store = self.store_mut(motion);
        for (i, f) in at.into_iter().zip(placed) {
            store.frames[i as usize] = f;
        }
        match motion {
            Motion::Fixed => self.fixed_fresh = false,
            // Its pairs found apart no longer are, as far as we know.
            Motion::Moving => {
                if let Some(m) = self.stored(handle)?.at.first().and_then(|&i| self.moving.meta.get(i as usize)) {
                    self.apart.teleported(m.rank);
                }
            }
        }
        self.contacts_current = false;
        Ok(())
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
        Ok(self.store(stored.body.motion).frames[*at as usize])
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
        self.contacts.clear();
        self.pairs.clear();
        self.previous.clear();
        self.events.clear();
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
        &self.contacts
    }

    /// The pairs of bodies in contact during the last step, sorted, each
    /// once (body-level pairs).
    ///
    /// ```
    /// # use fmbgrid::{World2, WorldConfig};
    /// assert!(World2::new(WorldConfig::default()).body_pairs().is_empty());
    /// ```
    pub fn body_pairs(&self) -> &[(BodyHandle, BodyHandle)] {
        &self.pairs
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
        &self.events
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
        if self.fixed_fresh {
            self.static_grid.query(aabb, |k| {
                // The grid's boxes are rounded outward: confirm exactly.
                if self.fixed.frames[k as usize].aabb().intersects(aabb) {
                    out.push(self.fixed.meta[k as usize].id());
                }
            });
        } else {
            out.extend(self.fixed.live().filter(|(f, _)| f.aabb().intersects(aabb)).map(|(_, m)| m.id()));
        }
        self.query_moving(aabb, &mut out);
        out.sort_unstable();
        out
    }

    /// The moving frames whose boxes meet `aabb`. Until a moving body is
    /// inserted, removed or re-posed after a step, the step's moving list
    /// holds each listed frame's box swept over that step, which contains
    /// its box now: the list's query gives a superset, confirmed exactly.
    /// Frames of large bodies (left out of the list when they reach
    /// nothing) are tested one by one; so is everything when the list is
    /// out of date.
    fn query_moving(&self, aabb: &Aabb<D>, out: &mut Vec<FrameId>) {
        let hit = |i: usize| self.moving.frames[i].aabb().intersects(aabb);
        if !self.contacts_current {
            out.extend(self.moving.live().filter(|(f, _)| f.aabb().intersects(aabb)).map(|(_, m)| m.id()));
            return;
        }
        // Without large bodies every frame is listed: no per-frame test.
        let any_large = self.largest_body >= step::LARGE_BODY;
        let large = |i: usize| any_large && self.body_frames[self.moving.meta[i].rank as usize] >= step::LARGE_BODY;
        // The list's ids are store indices (kept so by `follow_slot_order`).
        self.moving_grid.query(aabb, |i| {
            let i = i as usize;
            if !large(i) && hit(i) {
                out.push(self.moving.meta[i].id());
            }
        });
        if any_large {
            out.extend((0..self.moving.len()).filter(|&i| large(i) && hit(i)).map(|i| self.moving.meta[i].id()));
        }
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
        self.cell.base()
    }

    /// Bytes held by the broad phase (grids and flat frame lists), for the
    /// memory budget; excludes the bodies and frames themselves.
    ///
    /// ```
    /// # use fmbgrid::{World2, WorldConfig};
    /// assert!(World2::new(WorldConfig::default()).broad_phase_memory() < 1024);
    /// ```
    pub fn broad_phase_memory(&self) -> usize {
        self.static_grid.memory()
            + self.moving_grid.memory()
            + self.near_fixed.memory()
            + self.apart.memory()
            + self.proximity_grid.memory()
            + self.proximity.capacity() * size_of::<proximity::Proximity<D>>()
            + self.body_grid.memory()
            + (self.active.capacity() + self.body_frames.capacity()) * 4
            + self.body_boxes.capacity() * size_of::<Aabb<D>>()
            + (self.body_links.capacity() + self.body_link_starts.capacity()) * 4
            + (self.body_fixed.capacity() + self.body_fixed_starts.capacity()) * 4
            + self.fixed.meta_memory()
            + self.moving.meta_memory()
            + (self.moving_bodies.capacity() + self.slot_rank.capacity() + self.rank_scratch.capacity()) * 4
            + (self.body_shift.capacity() + self.next_shift.capacity()) * size_of::<[f64; D]>()
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

    /// Marks the store of `motion` for compaction (and, for fixed frames,
    /// the static grid for a rebuild) at the next step.
    fn mark_changed(&mut self, motion: Motion) {
        self.contacts_current = false;
        match motion {
            Motion::Fixed => self.fixed_fresh = false,
            Motion::Moving => self.moving_fresh = false,
        }
    }

    fn generation(&self, slot: u32) -> u32 {
        self.slots[slot as usize].generation
    }

    fn store(&self, motion: Motion) -> &Store<D> {
        match motion {
            Motion::Fixed => &self.fixed,
            Motion::Moving => &self.moving,
        }
    }

    fn store_mut(&mut self, motion: Motion) -> &mut Store<D> {
        match motion {
            Motion::Fixed => &mut self.fixed,
            Motion::Moving => &mut self.moving,
        }
    }

    /// Brings the stores, the cell size and the static grid up to date with
    /// the bodies inserted, removed or re-posed since the last step.
    fn refresh(&mut self) {
        if !self.fixed_fresh {
            self.cell = match self.config.cell_size {
                Some(w) => CellSize::new(w),
                None => {
                    let all = self.fixed.live().chain(self.moving.live()).map(|(f, _)| f.aabb());
                    cell_size_for(all, &mut self.scratch)
                }
            };
            self.compact(Motion::Fixed);
            self.build_static_grid();
            self.fixed_fresh = true;
        }
        if !self.moving_fresh {
            if self.fixed.len() == 0 && self.config.cell_size.is_none() {
                self.cell = cell_size_for(self.moving.live().map(|(f, _)| f.aabb()), &mut self.scratch);
            }
            self.compact(Motion::Moving);
            self.moving_bodies.clear();
            self.moving_bodies.extend(self.moving.meta.iter().filter(|m| m.frame == 0).map(|m| m.slot));
            self.moving_bodies.sort_unstable();
            self.body_frames.clear();
            self.body_frames.resize(self.moving_bodies.len(), 0);
            for m in &mut self.moving.meta {
                // Present: `moving_bodies` lists the slot of every moving frame.
                m.rank = self.moving_bodies.binary_search(&m.slot).unwrap_or(0) as u32;
                self.body_frames[m.rank as usize] += 1;
            }
            self.largest_body = self.body_frames.iter().copied().max().unwrap_or(0);
            self.rank_slots();
            self.moving_fresh = true;
        }
    }

    /// The fixed frames' cell list, built once per change of the fixed set
    /// and only queried: its build scratch is freed.
    fn build_static_grid(&mut self) {
        let frames = &self.fixed.frames;
        self.static_grid.build(self.cell, frames.len(), |k| (frames[k].aabb(), k as u32), None);
        self.static_grid.release_scratch();
        self.near_fixed.clear();
    }

    /// Compacts and spatially orders one store, updating the bodies' indices.
    fn compact(&mut self, motion: Motion) {
        let mut store = std::mem::take(self.store_mut(motion));
        // The moving store is re-sorted every few steps: it keeps its scratch.
        store.compact(&self.cell, motion == Motion::Moving, |m, i| {
            if let Some(stored) = &mut self.slots[m.slot as usize].stored {
                stored.at[m.frame as usize] = i;
            }
        });
        *self.store_mut(motion) = store;
        // Store indices changed: the pairs remembered apart name others.
        self.apart_stale = true;
        if motion == Motion::Moving {
            self.unsorted_steps = 0;
        }
    }
}

/// The body's frames placed at its pose.
fn place<const D: usize>(body: &Body<D>) -> Result<Vec<Frame<D>>, WorldError> {
    body.frames
        .iter()
        .enumerate()
        .map(|(index, f)| {
            body.pose.transform_frame(f).map_err(|e| match e {
                WorldError::Frame { source, .. } => WorldError::Frame { index, source },
                other => other,
            })
        })
        .collect()
}
