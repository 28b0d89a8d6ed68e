//! Saving a world and restoring it bit for bit: [`World::snapshot`] and
//! [`World::restore`].
//!
//! A step's answers depend on more than the bodies' poses: the placed
//! frames have been moved step by step (`origin + d`, not re-placed from
//! the pose, so their last bits differ from a fresh placement), the order
//! of the moving store (re-sorted along the cell list every few steps)
//! sets the order of the contacts, the cell size may have been chosen
//! from bodies since removed, and the events compare with the last step's
//! body pairs. A snapshot holds all of that, and nothing the step
//! rebuilds (cell lists, near lists, the pairs remembered apart: exact
//! filters, so starting them empty changes no answer). Restoring checks
//! every index and number, so a snapshot edited by hand or corrupted on
//! disk gives [`WorldError::BadSnapshot`], never a panic: and every
//! relation a world keeps between them (a frame's filter and position are
//! its body's, the free list holds the empty slots, the cell size is one
//! the world could have chosen), so that a restored world steps as some
//! world would.

use super::store::{DEAD, Meta, Store};
use super::{Slot, Stored, World, WorldConfig, check_vector, valid_length};
use crate::aabb::Aabb;
use crate::error::WorldError;
use crate::frame::{Frame, MAX_COORDINATE};
use crate::grid::{CellSize, MAX_ITEMS};
use crate::world::{Body, BodyHandle, Motion};

/// Everything a [`World`] needs to go on exactly as it would have: see
/// [`World::snapshot`]. With the `serde` feature it is `Serialize` and
/// `Deserialize` (any serde format; JSON and bincode keep every bit of
/// the numbers).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct WorldSnapshot<const D: usize> {
    config: WorldConfig,
    cell_size: f64,
    slots: Vec<SlotSnapshot<D>>,
    free: Vec<u32>,
    fixed_fresh: bool,
    moving_fresh: bool,
    fixed: Vec<PlacedFrame<D>>,
    moving: Vec<PlacedFrame<D>>,
    moving_bodies: Vec<u32>,
    unsorted_steps: u32,
    /// The last step's body pairs: the next step's events compare with them.
    pairs: Vec<(BodyHandle, BodyHandle)>,
}

/// A body slot: its generation and, while live, the body and where its
/// placed frames are in their store.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct SlotSnapshot<const D: usize> {
    generation: u32,
    body: Option<Body<D>>,
    at: Vec<u32>,
}

/// A frame of a store as the world holds it: the frame at rest (with the
/// box it computes itself, as it reads back from any serde format), its
/// box as the world holds it (moved with it step by step, so not always
/// the box a fresh frame would compute) and its metadata.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct PlacedFrame<const D: usize> {
    frame: Frame<D>,
    aabb: Aabb<D>,
    meta: Meta,
}

impl<const D: usize> World<D> {
    /// Everything the world needs to go on exactly as it would have: after
    /// [`World::restore`], the steps give the same contacts in the same
    /// order, the same events and the same handles as the steps of this
    /// world would have, bit for bit. The last step's answers (contacts,
    /// events) are not in it: the restored world has none until it steps.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, -1.0], [9.0, 0.0])?]))?;
    /// world.insert(Body::moving(vec![Frame2::from_aabb([1.0, 0.5], [2.0, 1.5])?]).with_velocity([0.3, -1.0]))?;
    /// world.step(0.1)?;
    /// let saved = world.snapshot();
    /// let mut copy = World2::restore(saved)?;
    /// for _ in 0..10 {
    ///     assert_eq!(world.step(0.1)?, copy.step(0.1)?);
    ///     assert_eq!(world.events(), copy.events());
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn snapshot(&self) -> WorldSnapshot<D> {
        let slots = self
            .slots
            .iter()
            .map(|s| SlotSnapshot {
                generation: s.generation,
                body: s.stored.as_ref().map(|st| st.body.clone()),
                at: s.stored.as_ref().map(|st| st.at.clone()).unwrap_or_default(),
            })
            .collect();
        let placed = |store: &Store<D>| {
            store
                .frames
                .iter()
                .zip(&store.meta)
                .map(|(f, m)| PlacedFrame { frame: f.with_own_aabb(), aabb: f.aabb(), meta: *m })
                .collect()
        };
        WorldSnapshot {
            config: self.config,
            cell_size: self.broad.cell.base(),
            slots,
            free: self.free.clone(),
            fixed_fresh: self.broad.is_fresh(Motion::Fixed),
            moving_fresh: self.broad.is_fresh(Motion::Moving),
            fixed: placed(&self.broad.fixed),
            moving: placed(&self.broad.moving),
            moving_bodies: if self.broad.is_fresh(Motion::Moving) {
                self.broad.moving_bodies.clone()
            } else {
                Vec::new()
            },
            unsorted_steps: self.broad.unsorted_steps(),
            pairs: self.narrow.pairs.clone(),
        }
    }

    /// The world a [`WorldSnapshot`] was taken of, ready to step.
    ///
    /// # Errors
    /// [`WorldError::BadSnapshot`] when the snapshot is not one a world
    /// could have taken (an index out of range, a body and its frames that
    /// do not name each other, a frame's filter or position not its
    /// body's, a free list without every empty slot, a body pair naming no
    /// body, a number out of range or a setting a world would not keep):
    /// nothing is built.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame3, World3, WorldConfig};
    /// let mut world = World3::new(WorldConfig::default());
    /// let h = world.insert(Body::moving(vec![Frame3::from_aabb([0.0; 3], [1.0; 3])?]).with_user_data(7))?;
    /// let copy = World3::restore(world.snapshot())?;
    /// assert_eq!(copy.user_data(h)?, 7);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn restore(snapshot: WorldSnapshot<D>) -> Result<Self, WorldError> {
        let s = snapshot;
        check_config(&s.config)?;
        check_cell_size(&s.config, s.cell_size)?;
        let mut world = World::new(s.config);
        world.broad.cell = CellSize::new(s.cell_size);
        world.slots = s.slots.into_iter().map(slot).collect::<Result<_, _>>()?;
        world.len = world.slots.iter().filter(|s| s.stored.is_some()).count();
        check_free(&world.slots, &s.free)?;
        world.free = s.free;
        let fresh = (s.fixed_fresh, s.moving_fresh);
        world.broad.fixed = store(s.fixed, Motion::Fixed, fresh, &world.slots)?;
        world.broad.moving = store(s.moving, Motion::Moving, fresh, &world.slots)?;
        check_placement(&world)?;
        check_positions(&world)?;
        check_pairs(&world.slots, &s.pairs)?;
        world.narrow.pairs = s.pairs;
        world.broad.restored(fresh, s.unsorted_steps);
        world.spinning = world.count_spinning();
        if s.moving_fresh {
            world.rank_restored(s.moving_bodies)?;
        } else if !s.moving_bodies.is_empty() {
            // A snapshot keeps the ranks only of a fresh store.
            return Err(WorldError::BadSnapshot("moving bodies' ranks"));
        }
        Ok(world)
    }

    /// Ranks, frame counts and slot ranks of the moving bodies from their
    /// order in a snapshot, checked against the store's ranks.
    fn rank_restored(&mut self, moving_bodies: Vec<u32>) -> Result<(), WorldError> {
        let bad = WorldError::BadSnapshot("moving bodies' ranks");
        let moving = |slot: u32| {
            self.slots
                .get(slot as usize)
                .and_then(|s| s.stored.as_ref())
                .is_some_and(|st| st.body.motion == Motion::Moving)
        };
        let live = self.slots.iter().filter(|s| s.stored.as_ref().is_some_and(|st| st.body.motion == Motion::Moving));
        if moving_bodies.len() != live.count() || !moving_bodies.iter().all(|&slot| moving(slot)) {
            return Err(bad);
        }
        let mut frames = vec![0u32; moving_bodies.len()];
        for m in self.broad.moving.meta.iter().filter(|m| m.live()) {
            match moving_bodies.get(m.rank as usize) {
                Some(&slot) if slot == m.slot => frames[m.rank as usize] += 1,
                _ => return Err(bad),
            }
        }
        // Every body counted its frames: no slot is listed twice.
        if frames.contains(&0) {
            return Err(bad);
        }
        self.motion.shifts = vec![[0.0; D]; moving_bodies.len()];
        self.broad.set_ranks(moving_bodies, frames, self.slots.len());
        Ok(())
    }
}

fn slot<const D: usize>(s: SlotSnapshot<D>) -> Result<Slot<D>, WorldError> {
    let stored = match s.body {
        None if s.at.is_empty() => None,
        None => return Err(WorldError::BadSnapshot("frames of an empty slot")),
        Some(body) => {
            // A world keeps a body's own frames at rest (the body's velocity
            // moves them).
            if body.frames.is_empty() || body.frames.len() != s.at.len() || body.frames.iter().any(Frame::is_moving) {
                return Err(WorldError::BadSnapshot("a body's frames"));
            }
            let moves = body.velocity != [0.0; D] || body.angular_velocity != [0.0; 3];
            if check_vector("velocity", &body.velocity).is_err()
                || check_vector("angular velocity", &body.angular_velocity).is_err()
                || (body.motion == Motion::Fixed && moves)
            {
                return Err(WorldError::BadSnapshot("a body's velocity"));
            }
            // Frames read back are trusted to be where the pose puts them
            // only once `set_poses` has compared them.
            Some(Stored { body, at: s.at, placed: false })
        }
    };
    Ok(Slot { generation: s.generation, stored })
}

/// The settings are ones a world keeps: [`World::new`] drops a cell size
/// or spin tolerance that is not a positive finite length (the same test,
/// [`valid_length`]), so a snapshot never holds one.
fn check_config(config: &WorldConfig) -> Result<(), WorldError> {
    if config.cell_size.is_some_and(|w| !valid_length(w)) {
        return Err(WorldError::BadSnapshot("the config's cell size"));
    }
    if config.spin_tolerance.is_some_and(|w| !valid_length(w)) {
        return Err(WorldError::BadSnapshot("the config's spin tolerance"));
    }
    Ok(())
}

/// Smallest automatic base cell size, below any `cell_size_for` can
/// choose (twice a frame's box extent). Each component of a frame has a
/// positive squared length (`Frame::new` refuses a zero one), so it is at
/// least √(5e-324) ≈ 1.6e-162 long; its unit components' determinant is
/// at least `MIN_HADAMARD_RATIO` (1e-6), so on every axis some component
/// reaches at least 1e-6 / 3^1.5 of that, about 3e-169. A box's extent is
/// then either 0 on that axis (lost against the origin's coordinate) or
/// about that or more; a median of 0 gives the fallback size 1.
const MIN_AUTO_CELL: f64 = 1e-170;

/// Largest automatic base cell size: twice the largest extent of a
/// frame's box, which lies within ±`MAX_COORDINATE`.
const MAX_AUTO_CELL: f64 = 4.0 * MAX_COORDINATE;

/// The cell size is one the world uses: the manual one when the config
/// sets it (the world uses no other), else 1 or what `cell_size_for`
/// chooses from some frames, which the range rule bounds (see
/// [`MIN_AUTO_CELL`], [`MAX_AUTO_CELL`]). The frames it was chosen from
/// may have been removed since, so it is not checked against the frames
/// in the snapshot.
fn check_cell_size(config: &WorldConfig, cell: f64) -> Result<(), WorldError> {
    let chosen = match config.cell_size {
        Some(w) => cell.to_bits() == w.to_bits(),
        None => cell == 1.0 || (MIN_AUTO_CELL..=MAX_AUTO_CELL).contains(&cell),
    };
    if chosen { Ok(()) } else { Err(WorldError::BadSnapshot("cell size")) }
}

/// The free list names each empty slot once, and only those: `insert`
/// takes slots from it, so an empty slot missing from it would never be
/// reused (and the handles given would differ from the original's).
fn check_free<const D: usize>(slots: &[Slot<D>], free: &[u32]) -> Result<(), WorldError> {
    let mut seen = vec![false; slots.len()];
    for &i in free {
        match slots.get(i as usize) {
            Some(s) if s.stored.is_none() && !seen[i as usize] => seen[i as usize] = true,
            _ => return Err(WorldError::BadSnapshot("free slots")),
        }
    }
    // Distinct empty slots, as many as there are: all of them.
    if free.len() != slots.iter().filter(|s| s.stored.is_none()).count() {
        return Err(WorldError::BadSnapshot("an empty slot not in the free list"));
    }
    Ok(())
}

/// The last step's body pairs name bodies live at that step: each handle
/// names an existing slot, either its live body or one removed since
/// (removing bumps the slot's generation, so an empty slot's own
/// generation names no body yet); the two are different slots (both
/// were live). Strictly increasing: a pair listed twice would end while
/// touching. The next step's events compare with them.
fn check_pairs<const D: usize>(slots: &[Slot<D>], pairs: &[(BodyHandle, BodyHandle)]) -> Result<(), WorldError> {
    let named = |h: &BodyHandle| {
        slots.get(h.index as usize).is_some_and(|s| s.stored.is_some() || s.generation != h.generation)
    };
    if !pairs.iter().all(|(a, b)| named(a) && named(b) && a.index != b.index) {
        return Err(WorldError::BadSnapshot("a body pair's handle"));
    }
    if !pairs.iter().all(|(a, b)| a < b) || !pairs.windows(2).all(|w| w[0] < w[1]) {
        return Err(WorldError::BadSnapshot("the last step's body pairs"));
    }
    Ok(())
}

/// A store of placed frames, each live one naming a live body of the
/// store's motion; boxes kept as saved after checking that they are the
/// frame's own, within round-off.
fn store<const D: usize>(
    placed: Vec<PlacedFrame<D>>,
    motion: Motion,
    fresh: (bool, bool),
    slots: &[Slot<D>],
) -> Result<Store<D>, WorldError> {
    if placed.len() > MAX_ITEMS {
        return Err(WorldError::BadSnapshot("store size"));
    }
    let mut store = Store::default();
    let fresh = match motion {
        Motion::Fixed => fresh.0,
        Motion::Moving => fresh.1,
    };
    for (i, p) in placed.into_iter().enumerate() {
        let m = p.meta;
        if m.slot == DEAD && fresh {
            // A store is compacted before it is fresh.
            return Err(WorldError::BadSnapshot("a removed frame in a fresh store"));
        }
        if m.slot != DEAD {
            let body =
                slots.get(m.slot as usize).filter(|s| s.generation == m.generation).and_then(|s| s.stored.as_ref());
            let names_back =
                body.is_some_and(|st| st.body.motion == motion && st.at.get(m.frame as usize) == Some(&(i as u32)));
            if !names_back {
                return Err(WorldError::BadSnapshot("a placed frame's body"));
            }
            // The step pairs frames by their own copy of the filter.
            if body.is_some_and(|st| (st.body.groups, st.body.mask) != (m.groups, m.mask)) {
                return Err(WorldError::BadSnapshot("a placed frame's collision filter"));
            }
        }
        if p.frame.is_moving() || !near(&p.aabb, &p.frame.aabb()) {
            return Err(WorldError::BadSnapshot("a placed frame's box"));
        }
        store.push(p.frame.with_aabb(p.aabb), m);
    }
    Ok(store)
}

/// Every live body's frames are in its store, where they name it back.
fn check_placement<const D: usize>(world: &World<D>) -> Result<(), WorldError> {
    for (index, s) in world.slots.iter().enumerate() {
        let Some(st) = &s.stored else { continue };
        let store = world.broad.store(st.body.motion);
        for (k, &i) in st.at.iter().enumerate() {
            match store.meta.get(i as usize) {
                Some(m) if m.slot == index as u32 && m.frame == k as u32 => {}
                _ => return Err(WorldError::BadSnapshot("a body's placed frames")),
            }
        }
    }
    Ok(())
}

/// Every live body's placed frames are its frames placed at its pose
/// ([`Pose::transform_frame`](crate::Pose::transform_frame), as `insert`,
/// `set_pose` and a turn place them): the same kind and components, bit
/// for bit (a step only translates a frame). A fixed frame is never
/// moved: its origin is the placement's, bit for bit. A moving one is
/// moved step by step (`origin + d`) while its pose's translation is
/// too: its box is the placement's up to that round-off (as [`near`]).
fn check_positions<const D: usize>(world: &World<D>) -> Result<(), WorldError> {
    for st in world.slots.iter().filter_map(|s| s.stored.as_ref()) {
        let store = world.broad.store(st.body.motion);
        for (own, &i) in st.body.frames.iter().zip(&st.at) {
            // In range: checked by `check_placement`.
            let placed = store.frames.get(i as usize);
            let from_pose = st.body.pose.transform_frame(own).ok();
            let at_pose = match (placed, from_pose) {
                (Some(p), Some(f)) => same_placement(st.body.motion, p, &f),
                _ => false,
            };
            if !at_pose {
                return Err(WorldError::BadSnapshot("a placed frame's position"));
            }
        }
    }
    Ok(())
}

/// `placed` (a store's frame) is `from_pose` (its body's frame placed at
/// the body's pose) as the world keeps it: see [`check_positions`].
fn same_placement<const D: usize>(motion: Motion, placed: &Frame<D>, from_pose: &Frame<D>) -> bool {
    let bits = |v: &[f64; D]| v.map(f64::to_bits);
    let same_shape = placed.kind() == from_pose.kind()
        && placed.components().iter().zip(&from_pose.components()).all(|(a, b)| bits(a) == bits(b));
    same_shape
        && match motion {
            Motion::Fixed => bits(&placed.origin()) == bits(&from_pose.origin()),
            Motion::Moving => near(&placed.aabb(), &from_pose.aabb()),
        }
}

/// The saved box is the frame's own box up to the round-off of the steps
/// that moved it (relative 1e-9 of the box's size and position).
fn near<const D: usize>(saved: &Aabb<D>, own: &Aabb<D>) -> bool {
    // Never inverted: the grid places a box by its corners.
    (0..D).all(|k| saved.min[k] <= saved.max[k])
        && (0..D).all(|k| {
            let scale = 1.0 + (own.max[k] - own.min[k]) + own.min[k].abs().max(own.max[k].abs());
            (saved.min[k] - own.min[k]).abs() <= 1e-9 * scale && (saved.max[k] - own.max[k]).abs() <= 1e-9 * scale
        })
}
