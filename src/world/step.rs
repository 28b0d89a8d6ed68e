//! `World::step`: the per-step pipeline.
//!
//! 0. A step that moves nothing after one that moved nothing, with nothing
//!    changed since, gives the last step's results again
//!    (`NarrowPhase::can_repeat`): nothing moved, nothing done.
//! 1. Validate the step and every displacement (nothing changes on error);
//!    when no moving body was added or removed since the last step, in one
//!    pass over the contiguous moving store.
//! 2. Sweep each moving frame's box by its body's displacement.
//! 3. The moving side: without large bodies, the pair set
//!    (`pair_set.rs`): each frame's swept box against its fat box; the
//!    frames that left theirs look up their pairs in a grid kept from step
//!    to step (`grid/fat_grid.rs`), the others keep theirs; or, while most
//!    frames leave their fat boxes, a cell list of the swept boxes is built
//!    and passed over (`grid/cell_list.rs`). With a large body (a mesh), the
//!    moving frames' cell list is rebuilt every step (one slot per frame,
//!    counting sort by cell, buffers reused; kept as it is while nothing
//!    moves nor changes), and a mesh's frames enter it only when their box
//!    reaches another body or a fixed frame. The fixed frames' list is
//!    rebuilt only when fixed bodies change; each moving frame's near list
//!    into it (`grid/near.rs`) is looked up again only when its swept box
//!    leaves its fat box.
//! 4. Candidate pairs (`pairs.rs`), entry by entry (the moving frames in
//!    store order, or the moving list's slots): moving partners from the
//!    pair set or the neighbouring cells, fixed partners from the near
//!    lists, each pair once; frames of one body and filtered bodies are
//!    skipped.
//! 5. The narrow phase on each candidate, as the world's
//!    [`ContactDetail`] asks: FMB with the exact box
//!    (`intersect`), FMB's interval alone (`overlap_interval`), or none;
//!    pairs FMB found apart by more than the distance their bodies have
//!    travelled since are skipped, and pairs it rejects remembered
//!    (`apart.rs`); a pair of frames at rest takes the last step's contact
//!    (`resting.rs`).
//! 6. Contacts in a deterministic order (the entries' order, whatever the
//!    thread count and the world's history), then body pairs and
//!    started/ended events.
//! 7. Moving bodies advance by their displacement.
//!
//! Steps 4–5 run in parallel chunks of entries with the `parallel`
//! feature; each chunk writes its own reused buffer, concatenated in order.
//!
//! Who does what: steps 0–1 here, with the step's motion into
//! `StepMotion` (`context.rs`); the broad phase's `refresh` (the stores)
//! and `update` (steps 1b–3, given the `StepContext`); the narrow phase's
//! `find_contacts` and `update_events` (steps 4–6); step 7 here, then the
//! broad phase's `follow` (the re-sort).

#[cfg(feature = "parallel")]
use rayon::prelude::*;

#[cfg(feature = "parallel")]
use super::narrow_phase::CHUNK;
use super::narrow_phase::Narrowing;
use super::profile::{Lap, StepProfile};
use super::runaway::Found;
use super::spin::spin_of;
use super::store::Meta;
use super::{Motion, World};
use crate::aabb::Aabb;
use crate::contact::{Contact, ContactDetail};
use crate::error::WorldError;
use crate::fallible::{NoRoom, room, room_for_one};
use crate::frame::{Frame, MAX_COORDINATE};
use crate::ids::BodyHandle;

impl<const D: usize> World<D> {
    /// Detects every pair of frames that intersects at some instant of the
    /// next `dt` time units, then advances the moving bodies by
    /// `velocity · dt`. Returns the contacts, each pair once, with the exact
    /// world box of the intersection over the step and the contact interval
    /// as fractions of the step.
    ///
    /// Pose changes made with [`World::set_pose`] take effect at the start of
    /// the step; rotation is not swept (frames translate during the step).
    ///
    /// Once its buffers have grown, a step allocates nothing. With the
    /// `parallel` feature, calling it from outside a rayon pool hands one job
    /// to rayon's global queue, which allocates a small block every few
    /// dozen calls; call it inside `pool.install` to avoid even that.
    ///
    /// A body whose `velocity · dt` is not a finite number within ±1e15, or
    /// would carry a frame beyond its [reach](crate::Frame::reach), is a
    /// runaway: by default ([`Runaway::Park`](crate::Runaway::Park)) it
    /// stays in place, stopped, and is listed by [`World::parked`], and the
    /// step goes on.
    ///
    /// # Errors
    /// [`WorldError::OutOfMemory`] when the step's contacts do not fit in
    /// memory (the bodies are not advanced, the last step's contacts stay);
    /// [`WorldError::BadTimeStep`] for a negative or non-finite `dt`; with
    /// [`Runaway::Refuse`](crate::Runaway::Refuse), [`WorldError::BadDisplacement`]
    /// or [`WorldError::OutOfRange`] for the first runaway body in handle
    /// order. The world is unchanged after an error.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig, WorldError};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, 0.0], [10.0, 1.0])?]))?;
    /// world.insert(Body::moving(vec![Frame2::from_aabb([0.0, 2.0], [1.0, 3.0])?]).with_velocity([0.0, -30.0]))?;
    /// let contacts = world.step(0.1)?; // falls 3 units: passes into the floor
    /// assert_eq!(contacts.len(), 1);
    /// assert!((contacts[0].time[0] - 1.0 / 3.0).abs() < 1e-12);
    /// assert!(matches!(world.step(f64::NAN), Err(WorldError::BadTimeStep { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn step(&mut self, dt: f64) -> Result<&[Contact<D>], WorldError> {
        let step = self.prepare_step(dt)?;
        self.commit_step(step);
        Ok(&self.narrow.contacts)
    }

    /// [`World::step`], calling `room` with the room the step's results take
    /// ([`StepRoom`]) once its contacts are found and before anything
    /// changes. A caller that copies the results out (a binding's arrays,
    /// a log) makes room for its copy there; when it cannot (`Err(bytes)`:
    /// the bytes it could not get), the step is called off and returns
    /// [`WorldError::OutOfMemory`] with the world as it was, so that low
    /// memory never leaves a step made whose answer was lost.
    ///
    /// # Errors
    /// As [`World::step`], and `OutOfMemory` from `room`.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig, WorldError};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, 0.0], [10.0, 1.0])?]))?;
    /// let falling = world.insert(Body::moving(vec![Frame2::from_aabb([0.0, 2.0], [1.0, 3.0])?]).with_velocity([0.0, -30.0]))?;
    /// let mut copy = Vec::new();
    /// let refused = world.step_with_room(0.1, |_| Err(1 << 40));
    /// assert!(matches!(refused, Err(WorldError::OutOfMemory { .. })));
    /// assert_eq!(world.body(falling)?.pose().translation(), [0.0, 0.0]); // not moved
    /// let contacts = world.step_with_room(0.1, |room| copy.try_reserve_exact(room.contacts).map_err(|_| 0))?;
    /// copy.extend_from_slice(contacts);
    /// assert_eq!(copy.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn step_with_room(
        &mut self,
        dt: f64,
        room: impl FnOnce(StepRoom) -> Result<(), usize>,
    ) -> Result<&[Contact<D>], WorldError> {
        let step = self.prepare_step(dt)?;
        let contacts = if step.repeat { self.narrow.contacts.len() } else { self.prepared_contacts() };
        // A step's body pairs are at most its contacts; its events start
        // at most one a pair and end at most the last step's pairs.
        let last = self.body_pairs().len();
        let needed = StepRoom { contacts, body_pairs: contacts, events: contacts.saturating_add(last) };
        if let Err(bytes) = room(needed) {
            self.abort_step(step);
            return Err(WorldError::OutOfMemory { bytes });
        }
        self.commit_step(step);
        Ok(&self.narrow.contacts)
    }

    /// The fallible half of [`World::step`] (steps 1–5): the checks, the
    /// stores brought up to date, the step's motion, the lists and the
    /// narrow phase, its contacts held aside; no body moves and the last
    /// step's results stay. Then [`World::commit_step`] makes the step
    /// (what `step` does), or [`World::abort_step`] calls it off, for a
    /// caller that must first hear from others (a distributed world's
    /// ranks agree on every rank's outcome before any rank steps).
    ///
    /// # Errors
    /// As [`World::step`]; the world is then as [`World::abort_step`]
    /// leaves it.
    pub(crate) fn prepare_step(&mut self, dt: f64) -> Result<PreparedStep, WorldError> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(WorldError::BadTimeStep { dt });
        }
        let mut lap = Lap::start();
        self.profile = StepProfile::default();
        self.undo.begin(&mut self.parked, self.broad.edits(), self.spinning);
        if self.narrow.can_repeat(&self.broad, dt) {
            // Nothing moved, nothing changed, nothing moves: the last
            // step's results stand (`NarrowPhase::can_repeat`).
            let step = PreparedStep { dt, repeat: true, shifted: false, still: true, lap };
            return match self.narrow.prepare_repeat() {
                Ok(()) => Ok(step),
                Err(e) => {
                    self.abort_step(step);
                    Err(e)
                }
            };
        }
        let ready = match self.check_displacements(dt) {
            Ok(ready) => ready,
            Err(e) => {
                // Refused before anything moved or was parked.
                std::mem::swap(&mut self.parked, &mut self.undo.parked);
                return Err(e);
            }
        };
        self.profile.check = lap.lap();
        // Called off with nothing to undo but the parking, on low memory.
        let unshifted = PreparedStep { dt, repeat: false, shifted: false, still: true, lap };
        let moved = self.broad.refresh(self.config.cell_size, &mut self.slots).and_then(|()| {
            self.profile.refresh = lap.lap();
            self.displacements(dt, ready)
        });
        if let Err(e) = moved {
            self.abort_step(unshifted);
            return Err(e.into());
        }
        let (still, found) = self.find_contacts(dt, &mut lap);
        let step = PreparedStep { dt, repeat: false, shifted: true, still, lap };
        match found {
            Ok(()) => Ok(step),
            Err(e) => {
                self.abort_step(step);
                Err(e)
            }
        }
    }

    /// Steps 2–5 of a prepared step, its displacements made: the turns,
    /// the broad phase's lists and the narrow phase's contacts; whether no
    /// body moves, and the outcome.
    fn find_contacts(&mut self, dt: f64, lap: &mut Lap) -> (bool, Result<(), WorldError>) {
        let turns = self.rank_turns(dt);
        let ctx = self.motion.context();
        let still = ctx.still();
        let coherent = self.config.detail != ContactDetail::Candidates;
        if let Err(e) = turns.and_then(|()| self.broad.update(&ctx, coherent)) {
            return (still, Err(e.into()));
        }
        self.profile.broad = lap.lap();
        let how = Narrowing::new(&self.config, self.spinning > 0);
        let found = self.narrow.find_contacts(&self.broad, &ctx, how, self.slots.len());
        self.profile.narrow = lap.lap();
        // The commit allocates nothing: its buffers' room is made here.
        let found = found
            .and_then(|()| self.broad.reserve_follow(&mut self.motion.next_shifts).map_err(WorldError::from))
            .and_then(|()| self.reserve_turns().map_err(WorldError::from));
        (still, found)
    }

    /// The infallible half of [`World::step`] (steps 6–7): the prepared
    /// step's contacts, body pairs and events become the world's, and the
    /// moving bodies advance.
    pub(crate) fn commit_step(&mut self, step: PreparedStep) {
        let mut lap = step.lap;
        if step.repeat {
            self.narrow.repeat();
            // Nothing to advance; the broad phase still counts the step.
            let (by_rank, scratch) = self.motion.by_rank();
            self.broad.follow(&mut self.slots, by_rank, scratch);
        } else {
            // The time since the preparation (a distributed world's
            // agreement between the halves) is no stage's.
            lap.lap();
            self.narrow.take_found();
            self.narrow.update_events(&self.slots);
            self.profile.events = lap.lap();
            self.advance(step.dt);
            self.profile.advance = lap.lap();
        }
        self.narrow.stepped(&self.broad, step.still.then_some(step.dt.to_bits()));
        self.profile.total = lap.total();
        #[cfg(debug_assertions)]
        self.validate();
    }

    /// How many contacts a prepared step found: what a distributed world
    /// makes room for before the commit.
    pub(crate) fn prepared_contacts(&self) -> usize {
        self.narrow.found_contacts()
    }

    /// Calls off a prepared step: every later call sees the world as it
    /// was before [`World::prepare_step`]. The bodies it parked get their
    /// motion back and the last step's parked list, contacts, body pairs,
    /// events and displacements stay. Not undone, as no later answer
    /// depends on it (but for the order of a later step's contacts when
    /// bodies are inserted or removed first): the stores brought up to
    /// date (compacted, the automatic cell size chosen), which the next
    /// step would have done; the pairs remembered apart are forgotten and
    /// queries test every frame until the next step (`BroadPhase::aborted`).
    pub(crate) fn abort_step(&mut self, step: PreparedStep) {
        let PreparedStep { dt: _, repeat: _, shifted, still: _, lap: _ } = step;
        // Double-buffered: the last step's displacements are back in front
        // (a repeated step computed none).
        if shifted {
            std::mem::swap(&mut self.motion.shifts, &mut self.motion.next_shifts);
        }
        for (h, velocity, turn) in std::mem::take(&mut self.undo.stopped) {
            if let Ok(stored) = self.stored_mut(h) {
                stored.body.angular_velocity = turn;
                self.write_velocity(h, velocity);
            }
        }
        self.spinning = self.undo.spinning;
        std::mem::swap(&mut self.parked, &mut self.undo.parked);
        self.broad.aborted(self.undo.edits);
        #[cfg(debug_assertions)]
        self.validate();
    }

    /// As [`World::step`], but the step's contacts move into `out` (its old
    /// content dropped, its buffer handed back to the world for the next
    /// step): nothing borrows the world while you read them, so you can
    /// change velocities and poses as you go, and once both buffers have
    /// grown a loop of `step_into` allocates nothing. Afterwards
    /// [`World::contacts`] is empty (the contacts are in `out`);
    /// [`World::contact_geometry`] takes them from `out` as long as the
    /// world is unchanged; events and body pairs are the step's.
    ///
    /// # Errors
    /// As [`World::step`]; `out` is then left as it was.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, 0.0], [10.0, 1.0])?]))?;
    /// let ball = world.insert(Body::moving(vec![Frame2::from_aabb([2.0, 2.0], [3.0, 3.0])?]).with_velocity([0.0, -20.0]))?;
    /// let mut contacts = Vec::new();
    /// world.step_into(0.1, &mut contacts)?;
    /// for c in &contacts {
    ///     // The world is free: bounce what hit the ground.
    ///     if c.b.body == ball || c.a.body == ball {
    ///         world.set_velocity(ball, [0.0, 20.0])?;
    ///     }
    /// }
    /// assert_eq!(contacts.len(), 1);
    /// assert_eq!(world.body(ball)?.velocity(), [0.0, 20.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn step_into(&mut self, dt: f64, out: &mut Vec<Contact<D>>) -> Result<(), WorldError> {
        self.step(dt)?;
        self.take_contacts(out);
        Ok(())
    }

    /// The last step's contacts move into `out` (its old content dropped,
    /// its buffer handed back to the world), as [`World::step_into`] does.
    pub(crate) fn take_contacts(&mut self, out: &mut Vec<Contact<D>>) {
        std::mem::swap(&mut self.narrow.contacts, out);
        self.narrow.contacts.clear();
        self.narrow.contacts_touched();
    }

    /// Step 1: every moving body's displacement is finite and keeps its
    /// frames within their reach (`range.rs`). Runaway bodies are handled
    /// by the world's [`Runaway`](super::Runaway) policy before anything
    /// else changes (the broad phase's refresh included), so a refused step
    /// leaves the world as it was.
    ///
    /// When no moving body was inserted or removed, the displacements are
    /// computed per body into scratch and the frames checked in one pass
    /// over the contiguous store; returns true then (the displacements are
    /// ready for [`World::displacements`]).
    fn check_displacements(&mut self, dt: f64) -> Result<bool, WorldError> {
        self.runaways.clear();
        if !self.broad.is_fresh(Motion::Moving) {
            // The list's buffer is reused: no allocation once warm.
            let mut runaways = std::mem::take(&mut self.runaways);
            let mut fits = true;
            for found in self.runaways_by_body(dt) {
                fits = room_for_one(&mut runaways);
                if !fits {
                    break;
                }
                runaways.push(found);
            }
            self.runaways = runaways;
            if !fits {
                return Err(WorldError::OutOfMemory { bytes: 2 * self.runaways.len() * size_of::<Found>() });
            }
            self.handle_runaways()?;
            return Ok(false);
        }
        // A bad displacement counts as zero for the range pass (frames at
        // rest are in range), and is listed by `next_displacements`.
        self.next_displacements(dt)?;
        let (shifts, slots, spinning) = (&self.motion.next_shifts, &self.slots, self.spinning > 0);
        let edits = self.broad.edits();
        if !spinning && self.motion.range.admits(edits, &self.motion.span) {
            // Every frame stays in range (`range_check.rs`).
            self.handle_runaways()?;
            return Ok(true);
        }
        let spin = |m: &Meta| if spinning { spin_of(slots, m.slot, dt) } else { None };
        let leaving = |(f, m): (&Frame<D>, &Meta)| turned_leaves(f, &shifts[m.rank as usize], spin(m));
        let meta = &self.broad.moving.meta;
        let any =
            self.motion.range.test_each(&self.broad.moving.frames, edits, !spinning, |i, f| leaving((f, &meta[i])));
        if any {
            // Rare: list every body leaving, once.
            let mut last = u32::MAX;
            for (f, m) in self.broad.moving.frames.iter().zip(&self.broad.moving.meta) {
                if m.rank != last && leaving((f, m)) {
                    if !room_for_one(&mut self.runaways) {
                        return Err(WorldError::OutOfMemory { bytes: 2 * self.runaways.len() * size_of::<Found>() });
                    }
                    self.runaways.push(Found { slot: m.slot, rank: m.rank, bad_number: None });
                    last = m.rank;
                }
            }
            self.runaways.sort_unstable_by_key(|f| f.slot);
            self.runaways.dedup_by_key(|f| f.slot);
        }
        self.handle_runaways()?;
        Ok(true)
    }

    /// The runaway bodies of a step of `dt`, body by body in slot order
    /// (the check when the stores changed since the last step, and a
    /// distributed world's check before its ghosts leave).
    pub(super) fn runaways_by_body(&self, dt: f64) -> impl Iterator<Item = Found> + '_ {
        self.slots.iter().enumerate().filter_map(move |(slot, s)| {
            let stored = s.stored.as_ref().filter(|st| st.body.motion == Motion::Moving)?;
            let (bad_number, leaves) = match displacement(&stored.body.velocity, dt) {
                Err(value) => (Some(value), false),
                Ok(d) => {
                    let spin = spin_of(&self.slots, slot as u32, dt);
                    (None, stored.at.iter().any(|&at| turned_leaves(&self.broad.moving.frames[at as usize], &d, spin)))
                }
            };
            (bad_number.is_some() || leaves).then_some(Found { slot: slot as u32, rank: u32::MAX, bad_number })
        })
    }

    /// Each moving body's displacement over a step of `dt`, by rank, into
    /// `next_shift`; a displacement that is not a finite number within
    /// range counts as zero, and its body is listed in `runaways`.
    ///
    /// # Errors
    /// [`NoRoom`] for the displacements, none made.
    fn next_displacements(&mut self, dt: f64) -> Result<(), NoRoom> {
        let (bodies, motion) = (&self.broad.moving_bodies, &mut self.motion);
        room(&mut motion.velocities, bodies.len())?;
        room(&mut motion.next_shifts, bodies.len())?;
        if !motion.velocities_current(self.broad.ranks_made(), bodies.len()) {
            // The ranks were made since the copy: copied again from the
            // slots (a cache miss a body), once.
            let slots = &self.slots;
            let velocity = |&slot: &u32| slots[slot as usize].stored.as_ref().map_or([0.0; D], |s| s.body.velocity);
            motion.velocities.clear();
            motion.velocities.extend(bodies.iter().map(velocity));
            motion.velocities_at = self.broad.ranks_made();
        }
        motion.next_shifts.clear();
        motion.next_shifts.resize(bodies.len(), [0.0; D]);
        // Whether some displacement is bad (left at zero), and the box of
        // the displacements as set, for the range check (`include`'s
        // selects, folded per chunk).
        let shift = |(bad, mut span): (bool, Aabb<D>), (d, v): (&mut [f64; D], &[f64; D])| {
            let this = match displacement(v, dt) {
                Ok(x) => {
                    *d = x;
                    false
                }
                Err(_) => true,
            };
            span.include(d);
            (bad | this, span)
        };
        let none = || (false, Aabb::EMPTY);
        #[cfg(feature = "parallel")]
        let (bad, span) = motion
            .next_shifts
            .par_iter_mut()
            .zip(&motion.velocities)
            .with_min_len(CHUNK)
            .fold(none, shift)
            .reduce(none, |(a, x), (b, y)| (a | b, x.union(&y)));
        #[cfg(not(feature = "parallel"))]
        let (bad, span) = motion.next_shifts.iter_mut().zip(&motion.velocities).fold(none(), shift);
        motion.span = span;
        if bad {
            // Rare: list them, in rank order.
            for (rank, (v, &slot)) in motion.velocities.iter().zip(bodies).enumerate() {
                if let Err(value) = displacement(v, dt) {
                    if !room_for_one(&mut self.runaways) {
                        return Err(NoRoom { bytes: 2 * self.runaways.len() * size_of::<Found>() });
                    }
                    self.runaways.push(Found { slot, rank: rank as u32, bad_number: Some(value) });
                }
            }
        }
        Ok(())
    }

    /// Each moving body's displacement over the step (checked already;
    /// computed already when `ready`).
    ///
    /// # Errors
    /// [`NoRoom`], none made (the last step's stay in front).
    fn displacements(&mut self, dt: f64, ready: bool) -> Result<(), NoRoom> {
        if !ready {
            // Checked body by body before the refresh: no bad body left
            // (runaways were refused, or parked with zero velocity).
            self.next_displacements(dt)?;
            self.runaways.clear();
        }
        // Double-buffered: this step's become the last step's.
        std::mem::swap(&mut self.motion.shifts, &mut self.motion.next_shifts);
        Ok(())
    }

    /// Step 7: moving bodies advance by the step's displacements (and turns,
    /// over `dt`); the broad phase follows them.
    fn advance(&mut self, dt: f64) {
        if self.spinning > 0 || !self.motion.turns.is_empty() {
            self.remember_turns(dt);
        }
        self.advance_poses();
        let shifts = &self.motion.shifts;
        // A frame at rest is left as it is (no write): its body stays as
        // placed (`Stored::placed`).
        let translate = |(f, m): (&mut Frame<D>, &Meta)| {
            let d = &shifts[m.rank as usize];
            if d.iter().any(|&x| x != 0.0) {
                f.translate(d);
            }
        };
        #[cfg(feature = "parallel")]
        self.broad.moving.frames.par_iter_mut().zip(&self.broad.moving.meta).with_min_len(CHUNK).for_each(translate);
        #[cfg(not(feature = "parallel"))]
        self.broad.moving.frames.iter_mut().zip(&self.broad.moving.meta).for_each(translate);
        self.motion.range.advanced(&self.motion.span);
        if !self.motion.turns.is_empty() {
            self.motion.range.forget();
            self.turn_bodies();
        }
        let (by_rank, scratch) = self.motion.by_rank();
        self.broad.follow(&mut self.slots, by_rank, scratch);
    }

    /// The moving bodies' poses translate by their displacements: in
    /// parallel over all the slots when most bodies move, else body by body
    /// (a mostly static world would sweep its fixed bodies' slots for
    /// nothing).
    fn advance_poses(&mut self) {
        let shift = |stored: &mut super::Stored<D>, d: &[f64; D]| {
            // A body at rest stays bit for bit, as its frames do (`advance`).
            if d.iter().all(|&x| x == 0.0) {
                return;
            }
            stored.placed = false;
            let t = stored.body.pose.translation_mut();
            for i in 0..D {
                t[i] += d[i];
            }
        };
        #[cfg(feature = "parallel")]
        if self.broad.moving_bodies.len() >= self.slots.len() / 2 && self.broad.slot_rank.len() == self.slots.len() {
            let shifts = &self.motion.shifts;
            self.slots.par_iter_mut().zip(&self.broad.slot_rank).with_min_len(CHUNK).for_each(|(s, &r)| {
                if let (Some(stored), Some(d)) = (&mut s.stored, shifts.get(r as usize)) {
                    shift(stored, d);
                }
            });
            return;
        }
        for (&slot, d) in self.broad.moving_bodies.iter().zip(&self.motion.shifts) {
            if let Some(stored) = &mut self.slots[slot as usize].stored {
                shift(stored, d);
            }
        }
    }
}

/// The room a step's results take, known before the step changes anything
/// ([`World::step_with_room`]): at most this many contacts, body pairs and
/// events (the contacts exactly).
///
/// ```
/// use fmbgrid::{Body, Frame2, World2, WorldConfig};
/// let mut world = World2::new(WorldConfig::default());
/// world.insert(Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
/// world.insert(Body::moving(vec![Frame2::from_aabb([0.5; 2], [1.5; 2])?]))?;
/// let mut seen = None;
/// world.step_with_room(0.1, |room| Ok(seen = Some(room)))?;
/// let room = seen.unwrap();
/// assert_eq!((room.contacts, room.body_pairs, room.events), (1, 1, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepRoom {
    /// The step's contacts.
    pub contacts: usize,
    /// At most this many body pairs ([`World::body_pairs`]).
    pub body_pairs: usize,
    /// At most this many events ([`World::events`]).
    pub events: usize,
}

/// A step [`World::prepare_step`] prepared, to hand to
/// [`World::commit_step`] or [`World::abort_step`] (one of them, once).
#[must_use = "a prepared step is committed or aborted"]
#[derive(Debug)]
pub(crate) struct PreparedStep {
    dt: f64,
    /// The last step's results stand (`NarrowPhase::can_repeat`).
    repeat: bool,
    /// This step's displacements were made and swapped in front (an abort
    /// puts the last step's back).
    shifted: bool,
    /// No body moves over the step.
    still: bool,
    /// The step's stopwatch (`World::profile`).
    lap: Lap,
}

/// What [`World::abort_step`] puts back: the last step's parked bodies,
/// the bodies the prepared step parked with their motion, and the count
/// of changes and of spinning bodies before it. Buffers reused: nothing
/// allocated unless a step parks bodies.
#[derive(Clone, Debug, Default)]
pub(super) struct StepUndo<const D: usize> {
    pub parked: Vec<BodyHandle>,
    pub stopped: Vec<(BodyHandle, [f64; D], [f64; 3])>,
    pub edits: u64,
    pub spinning: usize,
}

impl<const D: usize> StepUndo<D> {
    /// A step starts: the last step's parked list moves here (`parked`
    /// starts empty), and the counts are noted.
    fn begin(&mut self, parked: &mut Vec<BodyHandle>, edits: u64, spinning: usize) {
        std::mem::swap(parked, &mut self.parked);
        parked.clear();
        self.stopped.clear();
        (self.edits, self.spinning) = (edits, spinning);
    }
}

/// True when frame `f` (at rest) displaced by `d` leaves its reach.
#[inline(always)]
fn leaves<const D: usize>(f: &Frame<D>, d: &[f64; D]) -> bool {
    crate::range::leaves(&f.aabb(), d, f.reach_bound())
}

/// [`leaves`], for a frame that may also turn (`spin`): its box over the
/// step must stay within its reach.
#[inline(always)]
fn turned_leaves<const D: usize>(f: &Frame<D>, d: &[f64; D], spin: Option<crate::narrow::Spin<D>>) -> bool {
    match spin {
        Some(s) => crate::range::leaves(&crate::narrow::swept_aabb(&f.moved(*d), &s), &[0.0; D], f.reach_bound()),
        None => leaves(f, d),
    }
}

/// `velocity · dt`, or the first coordinate that is not a finite number
/// within the supported range.
#[inline]
fn displacement<const D: usize>(velocity: &[f64; D], dt: f64) -> Result<[f64; D], f64> {
    let d: [f64; D] = std::array::from_fn(|i| velocity[i] * dt);
    match d.iter().find(|x| !x.is_finite() || x.abs() > MAX_COORDINATE) {
        Some(&value) => Err(value),
        None => Ok(d),
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::world::{Body, WorldConfig};

    /// Moving boxes (some `turning`: no pair is then remembered apart),
    /// fixed ones, and a body of many frames: every part of a step.
    fn scene(seed: u64, config: WorldConfig, turning: bool) -> World<2> {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        let mut world = World::new(config);
        let frame = |r: &mut ChaCha8Rng, at: [f64; 2], size: f64| {
            let s = r.random_range(0.2..size);
            Frame::from_aabb(at, [at[0] + s, at[1] + s]).unwrap()
        };
        for i in 0..400 {
            let at = [r.random_range(0.0..40.0), r.random_range(0.0..40.0)];
            let body = if i % 5 == 0 {
                Body::fixed(vec![frame(&mut r, at, 3.0)])
            } else {
                let v = [r.random_range(-8.0..8.0), r.random_range(-8.0..8.0)];
                let b = Body::moving(vec![frame(&mut r, at, 1.5)]).with_velocity(v);
                if turning && i % 7 == 0 { b.with_angular_velocity(r.random_range(-3.0..3.0)) } else { b }
            };
            world.insert(body).unwrap();
        }
        let mesh: Vec<_> = (0..80).map(|k| frame(&mut r, [10.0 + 0.3 * f64::from(k), 20.0], 0.5)).collect();
        world.insert(Body::moving(mesh).with_velocity([1.0, -0.5])).unwrap();
        world
    }

    /// Everything a caller can read of a world after a step.
    type Seen = (Vec<Contact<2>>, Vec<(BodyHandle, BodyHandle)>, Vec<crate::ContactEvent>, Vec<BodyHandle>, String);

    fn seen(world: &World<2>) -> Seen {
        let geometry: Vec<_> = world.contacts().iter().map(|c| world.contact_geometry(c)).collect();
        let bodies: Vec<_> = world.bodies().map(|(h, b)| (h, b.clone())).collect();
        let rest = format!("{geometry:?} {bodies:?}");
        (world.contacts().to_vec(), world.body_pairs().to_vec(), world.events().to_vec(), world.parked().to_vec(), rest)
    }

    /// A prepared step called off leaves the world as it was, as every
    /// later call sees it: the last step's contacts (their geometry
    /// included: the displacements are the last step's), pairs, events
    /// and parked bodies, the bodies' poses and motion (a runaway the
    /// step parked moves again), and the steps after it give, bit for bit,
    /// what a world that never saw it gives.
    #[test]
    fn an_aborted_step_leaves_the_world_as_it_was() {
        for seed in 0..4 {
            let (config, turning) = (WorldConfig::default(), seed % 2 == 1);
            let (mut called_off, mut plain) = (scene(seed, config, turning), scene(seed, config, turning));
            for world in [&mut called_off, &mut plain] {
                for _ in 0..3 {
                    world.step(0.05).unwrap();
                }
            }
            assert_eq!(seen(&called_off), seen(&plain));
            // A runaway: the prepared step parks it.
            let runaway = called_off.bodies().find(|(_, b)| b.motion == Motion::Moving).map(|(h, _)| h).unwrap();
            for world in [&mut called_off, &mut plain] {
                world.set_velocity(runaway, [1e14, 0.0]).unwrap();
            }
            let before = seen(&called_off);
            let step = called_off.prepare_step(0.05).unwrap();
            assert_eq!(called_off.parked(), [runaway], "the prepared step parked the runaway");
            called_off.abort_step(step);
            assert_eq!(seen(&called_off), before, "seed {seed}: the world changed");
            assert_eq!(called_off.body(runaway).unwrap().velocity(), [1e14, 0.0]);
            // New velocities on both: every body goes back where it came
            // from (what the step called off found apart is no proof now).
            for world in [&mut called_off, &mut plain] {
                world.set_velocity(runaway, [2.0, 1.0]).unwrap();
                let moving: Vec<_> =
                    world.bodies().filter(|(_, b)| b.motion == Motion::Moving).map(|(h, _)| h).collect();
                for h in moving {
                    let v = world.body(h).unwrap().velocity();
                    world.set_velocity(h, [-3.0 * v[0], -3.0 * v[1]]).unwrap();
                }
            }
            for k in 0..6 {
                let (a, b) = (called_off.step(0.05).unwrap().to_vec(), plain.step(0.05).unwrap().to_vec());
                assert!(!a.is_empty());
                assert_eq!(a, b, "seed {seed}, step {k} after");
                assert_eq!(seen(&called_off), seen(&plain), "seed {seed}, step {k} after");
            }
        }
    }

    /// A step refused in its preparation (a runaway under
    /// [`Runaway::Refuse`](crate::Runaway::Refuse)) keeps the last step's
    /// results, and the world steps on as one that never saw it.
    #[test]
    fn a_refused_step_keeps_the_last_steps_results() {
        let config = WorldConfig::default().with_runaway(crate::Runaway::Refuse);
        let (mut refused, mut plain) = (scene(9, config, true), scene(9, config, true));
        for world in [&mut refused, &mut plain] {
            world.step(0.05).unwrap();
        }
        let h = refused.bodies().filter(|(_, b)| b.motion == Motion::Moving).nth(3).map(|(x, _)| x).unwrap();
        let v = refused.body(h).unwrap().velocity();
        refused.set_velocity(h, [0.0, 1e14]).unwrap();
        let before = seen(&refused);
        assert_eq!(refused.step(0.05), Err(WorldError::OutOfRange(h)));
        assert_eq!(seen(&refused), before);
        refused.set_velocity(h, v).unwrap();
        for _ in 0..3 {
            assert_eq!(refused.step(0.05).unwrap(), plain.step(0.05).unwrap());
        }
    }

    /// What a step called off found apart proves nothing: a box beside a
    /// long diagonal bar (inside the bar's box, far from the bar) moves
    /// away from it in the step called off, then towards it, farther
    /// than it was from the bar but not as far as the step called off
    /// had put it: the contact is found, as by a world that never saw the
    /// step called off.
    #[test]
    fn a_step_called_off_proves_no_pair_apart() {
        let make = || {
            let mut world = World::<2>::new(WorldConfig::default());
            let bar = Frame::from_aabb([0.0, -0.05], [20.0, 0.05]).unwrap();
            let pose = crate::world::Pose::from_angle(std::f64::consts::FRAC_PI_4, [0.0, 0.0]).unwrap();
            world.insert(Body::fixed(vec![bar]).with_pose(pose)).unwrap();
            let unit = Frame::from_aabb([10.0, 3.0], [10.2, 3.2]).unwrap();
            let h = world.insert(Body::moving(vec![unit]).with_velocity([1.0, -1.0])).unwrap();
            (world, h)
        };
        let ((mut called_off, h), (mut plain, _)) = (make(), make());
        // Away from the bar: 4.81 from it, then 6.22.
        let step = called_off.prepare_step(1.0).unwrap();
        called_off.abort_step(step);
        // Towards it: 4.95 along the normal, past the 4.81.
        for world in [&mut called_off, &mut plain] {
            world.set_velocity(h, [-3.5, 3.5]).unwrap();
        }
        let want = plain.step(1.0).unwrap().to_vec();
        assert_eq!(want.len(), 1);
        assert_eq!(called_off.step(1.0).unwrap(), want);
    }
}
