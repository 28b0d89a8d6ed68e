//! Bodies that turn within the step: a moving body with an angular
//! velocity `ω` turns by `ω·dt` about its reference point (its pose's
//! translation) while that point moves by `v·dt` ([`Spin`]'s motion).
//!
//! Where the step meets them:
//! * check and list: a spinning frame's box over the step is
//!   [`swept_aabb`] (the smaller of the ball of its reach about the moving
//!   pivot and the union of its enclosures), proven to contain every pose;
//! * narrow: a pair with a spinning frame is decided by
//!   [`intersect_spinning`] (conservative, refined to the world's spin
//!   tolerance); while any body has an angular velocity, no pair is
//!   remembered apart or skipped (the gaps and odometers of `apart.rs`
//!   count translation only: a body that turned would be closer than its
//!   odometer says);
//! * advance: the pose's linear part turns and the body's frames are
//!   placed anew from the pose; their poses at the step's start are kept
//!   for [`World::exact_boxes`] and [`World::contact_geometry`].
//!
//! A world without spinning bodies takes none of these paths: its answers
//! are the translating ones, bit for bit.

use super::store::Meta;
use super::{Body, BodyHandle, FrameId, Motion, Slot, World, WorldError, check_vector};
use crate::aabb::Aabb;
use crate::contact::ContactDetail;
use crate::fallible::{NoRoom, room};
use crate::frame::Frame;
use crate::narrow::{Spin, intersect_spinning, swept_aabb};

/// The relative spin tolerance by default: a pair of spinning frames is
/// refined until its enclosures are within this share of the larger
/// frame's own box (at rest, not swept by the step) of the true frames.
pub const SPIN_TOLERANCE: f64 = 1e-3;

/// The turn of the moving body in `slot` over a step of `dt`, if it turns.
pub(super) fn spin_of<const D: usize>(slots: &[Slot<D>], slot: u32, dt: f64) -> Option<Spin<D>> {
    body_spin(&slots.get(slot as usize)?.stored.as_ref()?.body, dt)
}

/// The turn of `body` over a step of `dt`, if it is moving and turns.
pub(crate) fn body_spin<const D: usize>(body: &Body<D>, dt: f64) -> Option<Spin<D>> {
    let rate = body.angular_velocity.map(|w| w * dt);
    (body.motion == Motion::Moving && rate != [0.0; 3]).then(|| Spin::from_parts(body.pose.translation(), rate))
}

/// The box moving frame `f` (at rest, of meta `m`, displaced by `d`)
/// sweeps over the step: spinning when its body turns (`spins`: the step's
/// turns by rank, empty when no body turns).
#[inline]
pub(super) fn frame_box<const D: usize>(spins: &[Option<Spin<D>>], f: &Frame<D>, m: &Meta, d: &[f64; D]) -> Aabb<D> {
    match spins.get(m.rank as usize) {
        Some(Some(spin)) => swept_aabb(&f.moved(*d), spin),
        _ => f.aabb().swept(d),
    }
}

/// The box and interval of a contact between `f` and `g` (moving ones
/// carrying their displacement) when either turns: in the `Candidates`
/// detail, their spinning boxes' overlap over the whole step; else
/// [`intersect_spinning`] with the world's tolerance (absolute, or
/// [`SPIN_TOLERANCE`] of the larger frame's box), whose box and interval
/// are conservative in either detail.
pub(super) fn spinning_contact<const D: usize>(
    detail: ContactDetail,
    f: &Frame<D>,
    sf: Option<Spin<D>>,
    g: &Frame<D>,
    sg: Option<Spin<D>>,
    tolerance: Option<f64>,
) -> Option<(Aabb<D>, [f64; 2])> {
    let still = |x: &Frame<D>| Spin::from_parts(x.origin(), [0.0; 3]);
    let (sf, sg) = (sf.unwrap_or_else(|| still(f)), sg.unwrap_or_else(|| still(g)));
    if detail == ContactDetail::Candidates {
        return swept_aabb(f, &sf).intersection(&swept_aabb(g, &sg)).map(|b| (b, [0.0, 1.0]));
    }
    // The frame's own size, at rest (not its box swept by the step).
    let size = |x: &Frame<D>| x.at(0.0).aabb().extent().iter().fold(0.0_f64, |m, e| m.max(*e));
    let tol = tolerance.unwrap_or_else(|| SPIN_TOLERANCE * size(f).max(size(g)));
    // The tolerance is positive: a configured one is checked, and a frame's
    // box has a positive extent.
    let c = intersect_spinning(f, &sf, g, &sg, tol).ok()??;
    Some((c.aabb, c.time))
}

impl<const D: usize> World<D> {
    /// Sets a moving body's angular velocity (see
    /// `Body::with_angular_velocity`): the shared part of the 2D and 3D
    /// entry points.
    pub(crate) fn set_turn(&mut self, handle: BodyHandle, omega: [f64; 3]) -> Result<(), WorldError> {
        check_vector("angular velocity", &omega)?;
        let stored = self.stored_mut(handle)?;
        if stored.body.motion == Motion::Fixed {
            return Err(WorldError::FixedBody(handle));
        }
        let (was, now) = (stored.body.angular_velocity != [0.0; 3], omega != [0.0; 3]);
        stored.body.angular_velocity = omega;
        self.narrow.motion_set();
        self.spinning = self.spinning + usize::from(now) - usize::from(was);
        // The pairs remembered apart were certified for translation only
        // (a turning body's pairs are never remembered: only a start or a
        // stop of its turn outdates them).
        if was != now {
            self.broad.turns_changed();
        }
        self.debug_validate();
        Ok(())
    }

    /// The turns of a step of `dt` by moving body rank (`motion.spins`),
    /// or none when no body turns.
    ///
    /// # Errors
    /// [`NoRoom`] for the spins.
    pub(super) fn rank_turns(&mut self, dt: f64) -> Result<(), NoRoom> {
        self.motion.spins.clear();
        if self.spinning > 0 {
            room(&mut self.motion.spins, self.broad.moving_bodies.len())?;
            let slots = &self.slots;
            self.motion.spins.extend(self.broad.moving_bodies.iter().map(|&slot| spin_of(slots, slot, dt)));
        }
        Ok(())
    }

    /// Before the step's advance: the spinning bodies' spins and their
    /// frames at the step's start (for the later look-ups of
    /// [`World::step_frame`]).
    pub(super) fn remember_turns(&mut self, dt: f64) {
        let motion = &mut self.motion;
        motion.turns.clear();
        motion.turned_frames.clear();
        for &slot in &self.broad.moving_bodies {
            let Some(spin) = spin_of(&self.slots, slot, dt) else { continue };
            let Some(stored) = &self.slots[slot as usize].stored else { continue };
            let body = BodyHandle { index: slot, generation: self.slots[slot as usize].generation };
            motion.turns.insert(body, spin);
            for (index, &at) in stored.at.iter().enumerate() {
                let id = FrameId { body, index: index as u32 };
                motion.turned_frames.insert(id, self.broad.moving.frames[at as usize]);
            }
        }
    }

    /// Room in the maps [`World::remember_turns`] fills in the commit, in
    /// the step's fallible half.
    ///
    /// # Errors
    /// [`NoRoom`], nothing changed but capacity.
    pub(super) fn reserve_turns(&mut self) -> Result<(), NoRoom> {
        if self.spinning == 0 {
            return Ok(());
        }
        let frames: usize = (self.broad.moving_bodies.iter())
            .filter_map(|&slot| self.slots[slot as usize].stored.as_ref())
            .filter(|st| st.body.angular_velocity != [0.0; 3])
            .map(|st| st.at.len())
            .sum();
        let motion = &mut self.motion;
        let (bodies, frames) = (self.spinning, frames);
        let bytes = frames.saturating_mul(size_of::<Frame<D>>() + size_of::<FrameId>());
        // Beyond what they hold: the last step's stay until the commit.
        motion.turns.try_reserve(bodies).map_err(|_| NoRoom { bytes })?;
        motion.turned_frames.try_reserve(frames).map_err(|_| NoRoom { bytes })
    }

    /// After the step's translation: the spinning bodies' poses turn about
    /// their reference points and their frames are placed anew.
    pub(super) fn turn_bodies(&mut self) {
        for (body, spin) in &self.motion.turns {
            let Some(stored) = &mut self.slots[body.index as usize].stored else { continue };
            stored.placed = false;
            let linear = stored.body.pose.linear().map(|c| spin.rotate(&c, 1.0));
            // A rotation of a valid pose is valid (same lengths and
            // volume); were it refused by round-off, the pose keeps its
            // orientation.
            if let Ok(pose) = super::Pose::new(linear, stored.body.pose.translation()) {
                stored.body.pose = pose;
            }
            for (frame, &at) in stored.body.frames.iter().zip(&stored.at) {
                if let Ok(placed) = stored.body.pose.transform_frame(frame) {
                    self.broad.moving.frames[at as usize] = placed;
                }
            }
        }
    }

    /// The frame `id` and its spin as the last step tested them, when its
    /// body turned in that step.
    pub(super) fn turned_frame(&self, id: FrameId) -> Option<(Frame<D>, Spin<D>)> {
        Some((*self.motion.turned_frames.get(&id)?, *self.motion.turns.get(&id.body)?))
    }

    /// The number of moving bodies with an angular velocity.
    pub(super) fn count_spinning(&self) -> usize {
        self.slots
            .iter()
            .filter_map(|s| s.stored.as_ref())
            .filter(|st| st.body.motion == Motion::Moving && st.body.angular_velocity != [0.0; 3])
            .count()
    }
}

impl World<2> {
    /// Turns a moving body at `omega` radians per unit time about its
    /// reference point from the next step on (see
    /// [`Body::with_angular_velocity`](crate::Body#impl-Body<2>)).
    ///
    /// # Errors
    /// [`WorldError::StaleHandle`], [`WorldError::FixedBody`],
    /// [`WorldError::BadNumber`] for a value that is not finite within
    /// ±1e15.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// // A bar that turns a quarter turn in one step sweeps a post it
    /// // misses at the start and at the end of the step.
    /// let bar = world.insert(Body::moving(vec![Frame2::from_aabb([0.0, -0.1], [4.0, 0.1])?]))?;
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([2.0, 2.0], [2.4, 2.4])?]))?;
    /// world.set_angular_velocity(bar, std::f64::consts::FRAC_PI_2)?;
    /// assert_eq!(world.step(1.0)?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_angular_velocity(&mut self, handle: BodyHandle, omega: f64) -> Result<(), WorldError> {
        self.set_turn(handle, [0.0, 0.0, omega])
    }
}

impl World<3> {
    /// Turns a moving body at `omega` (axis times radians per unit time)
    /// about its reference point from the next step on (see
    /// [`Body::with_angular_velocity`](crate::Body#impl-Body<3>)).
    ///
    /// # Errors
    /// [`WorldError::StaleHandle`], [`WorldError::FixedBody`],
    /// [`WorldError::BadNumber`] for a value that is not finite within
    /// ±1e15.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame3, World3, WorldConfig};
    /// let mut world = World3::new(WorldConfig::default());
    /// let blade = world.insert(Body::moving(vec![Frame3::from_aabb([0.0, -0.05, -0.2], [3.0, 0.05, 0.2])?]))?;
    /// world.insert(Body::fixed(vec![Frame3::from_aabb([-1.5, 1.0, -0.5], [-1.4, 2.0, 0.5])?]))?;
    /// world.set_angular_velocity(blade, [0.0, 0.0, std::f64::consts::TAU])?; // a whole turn a step
    /// assert_eq!(world.step(1.0)?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_angular_velocity(&mut self, handle: BodyHandle, omega: [f64; 3]) -> Result<(), WorldError> {
        self.set_turn(handle, omega)
    }
}
