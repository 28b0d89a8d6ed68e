//! Runaway bodies: moving bodies whose motion over a step is not a finite
//! displacement or would carry a frame beyond its reach (the [range
//! rule](crate::range)). One such body must not stop a simulation, so by
//! default the step parks it and goes on; a world can refuse the step
//! instead.

use super::{BodyHandle, World};
use crate::error::WorldError;

/// What [`World::step`] does with a runaway body: one whose `velocity · dt`
/// is not a finite number of magnitude at most 1e15, or would carry one of
/// its frames' boxes beyond that frame's [reach](crate::Frame::reach).
///
/// ```
/// use fmbgrid::{Body, Frame2, Runaway, World2, WorldConfig, WorldError};
/// let unit = Frame2::from_aabb([0.0; 2], [1.0; 2])?;
/// let body = || Body::moving(vec![unit]).with_velocity([1e13, 0.0]); // past ±1e12 in one step
///
/// let mut parking = World2::new(WorldConfig::default());
/// let h = parking.insert(body())?;
/// parking.step(1.0)?; // goes on: the body stays, stopped, and is reported
/// assert_eq!(parking.parked(), &[h]);
/// assert_eq!(parking.body(h)?.velocity(), [0.0, 0.0]);
///
/// let mut strict = World2::new(WorldConfig::default().with_runaway(Runaway::Refuse));
/// let h = strict.insert(body())?;
/// assert_eq!(strict.step(1.0), Err(WorldError::OutOfRange(h)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Runaway {
    /// The step goes on. Each runaway body stays where it is for this
    /// step (its frames collide at rest), its velocity is set to zero, and
    /// it is listed by [`World::parked`] until the next step. The default:
    /// one body gone wrong never stops the others.
    #[default]
    Park,
    /// The step is refused with [`WorldError::BadDisplacement`] or
    /// [`WorldError::OutOfRange`] for the first runaway body in handle
    /// order, and the world is left unchanged.
    Refuse,
}

/// A runaway found by the step's check: the body's slot, its rank among
/// the moving bodies (`u32::MAX` when unknown), and the bad displacement
/// coordinate when that is the reason.
#[derive(Clone, Copy, Debug)]
pub(super) struct Found {
    pub slot: u32,
    pub rank: u32,
    pub bad_number: Option<f64>,
}

impl<const D: usize> World<D> {
    /// The bodies the last [`World::step`] parked (with [`Runaway::Park`]),
    /// in handle order: each stayed in place for that step and had its
    /// velocity set to zero. Empty when the step parked none. Like
    /// [`World::contacts`], it is the last step's record: a body removed
    /// since stays listed until the next step (or [`World::clear`]).
    ///
    /// ```
    /// # use fmbgrid::{World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.step(0.1)?;
    /// assert!(world.parked().is_empty());
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn parked(&self) -> &[BodyHandle] {
        &self.parked
    }

    /// The handle of the live body in `slot`.
    pub(crate) fn handle_of(&self, slot: u32) -> BodyHandle {
        BodyHandle { index: slot, generation: self.generation(slot) }
    }

    /// The error of a runaway, as [`Runaway::Refuse`] reports it.
    pub(super) fn runaway_error(&self, found: &Found) -> WorldError {
        match found.bad_number {
            Some(value) => WorldError::BadDisplacement { body: self.handle_of(found.slot), value },
            None => WorldError::OutOfRange(self.handle_of(found.slot)),
        }
    }

    /// The moving bodies a step of `dt` would find runaway, in handle
    /// order: [`World::step`]'s own check, without changing anything.
    pub(crate) fn runaways(&self, dt: f64) -> Vec<BodyHandle> {
        self.runaways_by_body(dt).map(|f| self.handle_of(f.slot)).collect()
    }

    /// Stops a moving body as a parked runaway stops: no velocity, and no
    /// turn either (a parked body stays). The step's own parking, and a
    /// distributed world's before its ghosts leave.
    pub(crate) fn park(&mut self, h: BodyHandle) {
        if let Ok(stored) = self.stored_mut(h) {
            let turned = stored.body.angular_velocity != [0.0; 3];
            stored.body.angular_velocity = [0.0; 3];
            self.write_velocity(h, [0.0; D]);
            self.spinning -= usize::from(turned);
            self.broad.stopped(turned);
        }
    }

    /// Applies the world's policy to the runaways in `self.runaways` (each
    /// body at most once): the first one's error with [`Runaway::Refuse`];
    /// else each is parked, its displacement of this step (by rank, in
    /// `next_shift`, when known) set to zero.
    pub(super) fn handle_runaways(&mut self) -> Result<(), WorldError> {
        if self.runaways.is_empty() {
            return Ok(());
        }
        if self.config.runaway == Runaway::Refuse {
            // Not empty (checked above).
            let first = self.runaways.iter().min_by_key(|f| f.slot).copied();
            return first.map_or(Ok(()), |f| Err(self.runaway_error(&f)));
        }
        let runaways = std::mem::take(&mut self.runaways);
        for f in &runaways {
            if let Some(d) = self.motion.next_shifts.get_mut(f.rank as usize) {
                *d = [0.0; D];
            }
            let h = self.handle_of(f.slot);
            // Noted first, so that a step called off can give it back.
            if let Ok(stored) = self.stored(h) {
                self.undo.stopped.push((h, stored.body.velocity, stored.body.angular_velocity));
            }
            self.park(h);
            self.parked.push(h);
        }
        self.parked.sort_unstable();
        self.parked.dedup();
        self.runaways = runaways;
        self.runaways.clear();
        Ok(())
    }
}
