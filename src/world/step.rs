//! `World::step`: the per-step pipeline.
//!
//! 1. Validate the step and every displacement (nothing changes on error);
//!    when no moving body was added or removed since the last step, in one
//!    pass over the contiguous moving store.
//! 2. Sweep each moving frame's box by its body's displacement.
//! 3. Cell lists (`grid/cell_list.rs`): the moving frames' list is rebuilt
//!    every step (one slot per frame, counting sort by cell, buffers
//!    reused); the fixed frames' list only when fixed bodies change.
//!    Frames of bodies with many frames (meshes) enter the moving list only
//!    when their box reaches another body or a fixed frame.
//!    Each moving frame's near list into the fixed list (`grid/near.rs`)
//!    is looked up again only when its swept box leaves its fat box.
//! 4. Candidate pairs (`pairs.rs`), in one spatially coherent pass over the
//!    moving list's slots: moving partners from the neighbouring cells,
//!    fixed partners from the near lists, each pair once; frames of one body
//!    (grouped in the list, so their boxes are not even compared) and
//!    filtered bodies are skipped.
//! 5. The narrow phase on each candidate, as the world's
//!    [`ContactDetail`](crate::ContactDetail) asks: FMB with the exact box
//!    (`intersect`), FMB's interval alone (`overlap_interval`), or none;
//!    pairs FMB found apart by more than the distance their bodies have
//!    travelled since are skipped, and pairs it rejects remembered
//!    (`apart.rs`).
//! 6. Contacts in a deterministic order (the list's slot order, whatever
//!    the thread count), then body pairs and started/ended events.
//! 7. Moving bodies advance by their displacement.
//!
//! Steps 4–5 run in parallel chunks of slots with the `parallel` feature;
//! each chunk writes its own reused buffer, concatenated in order.

use std::sync::atomic::{AtomicBool, Ordering};

#[cfg(feature = "parallel")]
use rayon::prelude::*;

use super::apart::{ApartPairs, fixed_key, moving_key};
use super::runaway::Found;
use super::spin::{frame_box, spin_of, spinning_contact};
use super::store::Meta;
use super::{BodyHandle, World};
use crate::aabb::Aabb;
use crate::contact::ContactDetail;
use crate::contact::{Contact, ContactEvent};
use crate::error::WorldError;
use crate::frame::{Frame, MAX_COORDINATE};
use crate::narrow::{gap_exceeding, intersect, overlap_interval};
use crate::pairs::{FixedSide, Partner, for_each_candidate};

/// Moving-list slots per parallel task: large enough to amortise
/// scheduling, small enough to balance two to a few dozen threads.
const CHUNK: usize = 1024;

/// Slots between two checks of whether another chunk ran out of memory.
const STOP_CHECK: usize = 64;

/// Bodies with at least this many frames get the body-level pruning of
/// `build_moving_grid`.
pub(super) const LARGE_BODY: u32 = 64;

/// A large body reaching more fixed frames than this queries the fixed
/// list for each of its frames instead of testing them one by one.
const FIXED_FEW: usize = 32;

/// The mark of a large body reaching many fixed frames.
pub(super) const FIXED_MANY: u32 = u32::MAX;

/// Steps between re-sorts of the moving store into the cell list's order.
const RESORT_STEPS: u32 = 32;

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
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(WorldError::BadTimeStep { dt });
        }
        self.step_dt = dt;
        let ready = self.check_displacements(dt)?;
        self.refresh();
        self.displacements(dt, ready);
        self.start_coherence();
        self.build_moving_grid();
        self.refresh_near_fixed();
        self.find_contacts()?;
        self.update_events();
        self.advance();
        self.contacts_current = true;
        Ok(&self.contacts)
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
        std::mem::swap(&mut self.contacts, out);
        self.contacts.clear();
        Ok(())
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
        self.parked.clear();
        self.runaways.clear();
        if !self.moving_fresh {
            // The list's buffer is reused: no allocation once warm.
            let mut runaways = std::mem::take(&mut self.runaways);
            runaways.extend(self.runaways_by_body(dt));
            self.runaways = runaways;
            self.handle_runaways()?;
            return Ok(false);
        }
        // A bad displacement counts as zero for the range pass (frames at
        // rest are in range), and is listed by `next_displacements`.
        self.next_displacements(dt);
        let (shifts, slots, spinning) = (&self.next_shift, &self.slots, self.spinning > 0);
        let spin = |m: &Meta| if spinning { spin_of(slots, m.slot, dt) } else { None };
        let leaving = |(f, m): (&Frame<D>, &Meta)| turned_leaves(f, &shifts[m.rank as usize], spin(m));
        #[cfg(feature = "parallel")]
        let any = self.moving.frames.par_iter().zip(&self.moving.meta).with_min_len(CHUNK).any(leaving);
        #[cfg(not(feature = "parallel"))]
        let any = self.moving.frames.iter().zip(&self.moving.meta).any(leaving);
        if any {
            // Rare: list every body leaving, once.
            let mut last = u32::MAX;
            for (f, m) in self.moving.frames.iter().zip(&self.moving.meta) {
                if m.rank != last && leaving((f, m)) {
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
            let stored = s.stored.as_ref().filter(|st| st.body.motion == super::Motion::Moving)?;
            let (bad_number, leaves) = match displacement(&stored.body.velocity, dt) {
                Err(value) => (Some(value), false),
                Ok(d) => {
                    let spin = spin_of(&self.slots, slot as u32, dt);
                    (None, stored.at.iter().any(|&at| turned_leaves(&self.moving.frames[at as usize], &d, spin)))
                }
            };
            (bad_number.is_some() || leaves).then_some(Found { slot: slot as u32, rank: u32::MAX, bad_number })
        })
    }

    /// Each moving body's displacement over a step of `dt`, by rank, into
    /// `next_shift`; a displacement that is not a finite number within
    /// range counts as zero, and its body is listed in `runaways`.
    fn next_displacements(&mut self, dt: f64) {
        self.next_shift.clear();
        self.next_shift.resize(self.moving_bodies.len(), [0.0; D]);
        let slots = &self.slots;
        let velocity = |slot: u32| slots[slot as usize].stored.as_ref().map_or([0.0; D], |s| s.body.velocity);
        // In parallel: each body's velocity is behind its slot (a cache
        // miss a body). True for a bad displacement, left at zero.
        let shift = |(d, &slot): (&mut [f64; D], &u32)| match displacement(&velocity(slot), dt) {
            Ok(x) => {
                *d = x;
                false
            }
            Err(_) => true,
        };
        #[cfg(feature = "parallel")]
        let bad = self
            .next_shift
            .par_iter_mut()
            .zip(&self.moving_bodies)
            .with_min_len(CHUNK)
            .map(shift)
            .reduce(|| false, |a, b| a | b);
        #[cfg(not(feature = "parallel"))]
        let bad = self.next_shift.iter_mut().zip(&self.moving_bodies).map(shift).fold(false, |a, b| a | b);
        if bad {
            // Rare: list them, in rank order.
            for (rank, &slot) in self.moving_bodies.iter().enumerate() {
                if let Err(value) = displacement(&velocity(slot), dt) {
                    self.runaways.push(Found { slot, rank: rank as u32, bad_number: Some(value) });
                }
            }
        }
    }

    /// Each moving body's displacement over the step (checked already;
    /// computed already when `ready`).
    fn displacements(&mut self, dt: f64, ready: bool) {
        if !ready {
            // Checked body by body before the refresh: no bad body left
            // (runaways were refused, or parked with zero velocity).
            self.next_displacements(dt);
            self.runaways.clear();
        }
        std::mem::swap(&mut self.body_shift, &mut self.next_shift);
    }

    /// Step 1b: the odometers of temporal coherence (`apart.rs`) take this
    /// step's displacements, after a reset if store indices changed. Without
    /// a narrow phase nothing is remembered, and the odometers would fall
    /// behind: the next step with one starts afresh.
    fn start_coherence(&mut self) {
        if self.config.detail == ContactDetail::Candidates {
            self.apart_stale = true;
            return;
        }
        if self.apart_stale {
            self.apart.reset(self.moving.len(), self.moving_bodies.len());
            self.apart_stale = false;
        }
        self.apart.start_step(&self.body_shift);
    }

    /// Steps 2–3: swept boxes of the moving frames into the moving grid.
    ///
    /// Frames of a body with many frames (a mesh) sit in crowded cells next
    /// to their own body's frames, which they never pair with: such a frame
    /// enters the grid only if its box reaches another body's box or a fixed
    /// frame. Otherwise it cannot pair with anything, so leaving it out
    /// changes no answer.
    fn build_moving_grid(&mut self) {
        self.rank_turns();
        let swept =
            |spins: &[_], shift: &[[f64; D]], f: &Frame<D>, m: &Meta| frame_box(spins, f, m, &shift[m.rank as usize]);
        self.active.clear();
        if self.largest_body < LARGE_BODY {
            self.active.extend(0..self.moving.len() as u32);
        } else {
            let (shifts, spins) = (std::mem::take(&mut self.body_shift), std::mem::take(&mut self.rank_spins));
            self.link_bodies(|f, m| swept(&spins, &shifts, f, m));
            (self.body_shift, self.rank_spins) = (shifts, spins);
            let (links, starts) = (&self.body_links, &self.body_link_starts);
            let (fixed, starts_fixed) = (&self.body_fixed, &self.body_fixed_starts);
            for (i, (f, m)) in self.moving.frames.iter().zip(&self.moving.meta).enumerate() {
                let r = m.rank as usize;
                if self.body_frames[r] < LARGE_BODY {
                    self.active.push(i as u32);
                    continue;
                }
                // Only the bodies this body's box reaches; the fixed frames
                // only if it reaches one.
                let b = swept(&self.rank_spins, &self.body_shift, f, m);
                let near = &links[starts[r] as usize..starts[r + 1] as usize];
                let mut reach = near.iter().any(|&o| b.intersects(&self.body_boxes[o as usize]));
                if !reach {
                    reach = match &fixed[starts_fixed[r] as usize..starts_fixed[r + 1] as usize] {
                        // Too many to test one by one: the list's query.
                        [FIXED_MANY, ..] => {
                            self.static_grid.query(&b, |_| reach = true);
                            reach
                        }
                        few => few.iter().any(|&k| b.intersects(&self.fixed.frames[k as usize].aabb())),
                    };
                }
                if reach {
                    self.active.push(i as u32);
                }
            }
        }
        // Each item carries its store index as id.
        let (active, moving) = (&self.active, &self.moving);
        let item = |k: usize| {
            let i = active[k];
            (swept(&self.rank_spins, &self.body_shift, &moving.frames[i as usize], &moving.meta[i as usize]), i)
        };
        // Grouped by body when bodies have several frames: the pairs pass
        // skips a body's own frames.
        let body = |k: usize| moving.meta[active[k] as usize].rank;
        let group: Option<&dyn Fn(usize) -> u32> = (self.largest_body > 1).then_some(&body);
        self.moving_grid.build(self.cell, active.len(), item, group);
    }

    /// Step 3b: each moving frame's near list into the fixed list
    /// (`grid/near.rs`), looked up again only for frames that left their
    /// fat box. Frames of large bodies query the fixed list directly (most
    /// of them never reach the pairs pass).
    fn refresh_near_fixed(&mut self) {
        if self.static_grid.is_empty() {
            return;
        }
        let (moving, shift, frames, spins) = (&self.moving, &self.body_shift, &self.body_frames, &self.rank_spins);
        let frame = |i: usize| {
            let m = &moving.meta[i];
            let d = shift[m.rank as usize];
            (frames[m.rank as usize] < LARGE_BODY).then(|| (frame_box(spins, &moving.frames[i], m, &d), d))
        };
        self.near_fixed.refresh(&self.static_grid, moving.len(), frame);
    }

    /// The moving bodies' boxes (by rank: the union of `frame_box` over
    /// their frames), their cell list, and each large body's links to the
    /// bodies and fixed frames its box reaches ([`World::link_large_bodies`]).
    pub(super) fn link_bodies(&mut self, frame_box: impl Fn(&Frame<D>, &Meta) -> Aabb<D>) {
        self.body_boxes.clear();
        self.body_boxes.resize(self.moving_bodies.len(), Aabb::EMPTY);
        for (f, m) in self.moving.frames.iter().zip(&self.moving.meta) {
            let r = m.rank as usize;
            self.body_boxes[r] = self.body_boxes[r].union(&frame_box(f, m));
        }
        let mut bodies = std::mem::take(&mut self.body_grid);
        let boxes = &self.body_boxes;
        bodies.build(self.cell, boxes.len(), |r| (boxes[r], r as u32), None);
        self.link_large_bodies(&bodies);
        self.body_grid = bodies;
    }

    /// For each large moving body, the other moving bodies whose boxes its
    /// box reaches (`body_links`, by rank) and the fixed frames it reaches
    /// (`body_fixed`, or [`FIXED_MANY`] alone when there are more than
    /// [`FIXED_FEW`]): a frame of the body can only pair with those. Small
    /// bodies' frames all enter the list; they get no links.
    fn link_large_bodies(&mut self, bodies: &crate::grid::CellList<D>) {
        self.body_links.clear();
        self.body_link_starts.clear();
        self.body_link_starts.push(0);
        self.body_fixed.clear();
        self.body_fixed_starts.clear();
        self.body_fixed_starts.push(0);
        for (r, b) in self.body_boxes.iter().enumerate() {
            if self.body_frames[r] >= LARGE_BODY {
                bodies.query(b, |o| {
                    if o as usize != r {
                        self.body_links.push(o);
                    }
                });
                // At most `FIXED_FEW + 1` kept: a mesh over a million fixed
                // frames must not grow the list to a million.
                let from = self.body_fixed.len();
                self.static_grid.query(b, |k| {
                    if self.body_fixed.len() - from <= FIXED_FEW {
                        self.body_fixed.push(k);
                    }
                });
                if self.body_fixed.len() - from > FIXED_FEW {
                    self.body_fixed.truncate(from);
                    self.body_fixed.push(FIXED_MANY);
                }
            }
            self.body_link_starts.push(self.body_links.len() as u32);
            self.body_fixed_starts.push(self.body_fixed.len() as u32);
        }
    }

    /// Steps 4–6: candidates, FMB, contacts in deterministic order. The
    /// contact buffers grow fallibly: contacts that do not fit in memory
    /// (a scene where everything overlaps everything) are an error, with
    /// the last step's contacts untouched.
    fn find_contacts(&mut self) -> Result<(), WorldError> {
        let n = self.moving_grid.len();
        let count = n.div_ceil(CHUNK);
        let mut chunks = std::mem::take(&mut self.chunks);
        // Never shrunk: a chunk's buffer keeps its capacity for later steps.
        if chunks.len() < count {
            chunks.resize_with(count, Chunk::default);
        }
        let this = &*self;
        // Set by the first chunk out of memory: the others stop early.
        let failed = AtomicBool::new(false);
        let run = |(c, chunk): (usize, &mut Chunk<D>)| {
            chunk.contacts.clear();
            let (start, end) = (c * CHUNK, n.min((c + 1) * CHUNK));
            for from in (start..end).step_by(STOP_CHECK) {
                if failed.load(Ordering::Relaxed) {
                    return false;
                }
                if !this.contacts_in(from..end.min(from + STOP_CHECK), chunk) {
                    failed.store(true, Ordering::Relaxed);
                    return false;
                }
            }
            true
        };
        #[cfg(feature = "parallel")]
        let fits = chunks[..count].par_iter_mut().enumerate().map(run).reduce(|| true, |a, b| a & b);
        #[cfg(not(feature = "parallel"))]
        let fits = chunks[..count].iter_mut().enumerate().map(run).fold(true, |a, b| a & b);
        let total: usize = chunks[..count].iter().map(|c| c.contacts.len()).sum();
        let bytes = total.saturating_mul(size_of::<Contact<D>>());
        let fits = fits && self.contacts.try_reserve(total.saturating_sub(self.contacts.len())).is_ok();
        let fits = fits && self.pair_keys.try_reserve(total.saturating_sub(self.pair_keys.len())).is_ok();
        if !fits {
            for c in &mut chunks {
                c.contacts = Vec::new();
            }
            self.chunks = chunks;
            return Err(WorldError::OutOfMemory { bytes });
        }
        self.contacts.clear();
        for c in &chunks[..count] {
            self.contacts.extend_from_slice(&c.contacts);
        }
        self.chunks = chunks;
        Ok(())
    }

    /// The contacts of the candidate pairs of a range of the moving list's
    /// slots, into the chunk's contacts; false when they did not fit in
    /// memory (the contacts are then short).
    fn contacts_in(&self, entries: std::ops::Range<usize>, chunk: &mut Chunk<D>) -> bool {
        let out = &mut chunk.contacts;
        let mut fits = true;
        let (moving, fixed) = (&self.moving, &self.fixed);
        let moved = |i: u32, m: &Meta| moving.frames[i as usize].moved(self.body_shift[m.rank as usize]);
        let detail = self.config.detail;
        // Temporal coherence only while no body turns: a turn moves a
        // body's points farther than its odometer (its translation) says.
        let (apart, coherent) = (&self.apart, detail != ContactDetail::Candidates && self.spinning == 0);
        // The narrow phase, unless the pair is remembered apart (`apart.rs`):
        // item `i` of body rank `rank`, its partner `key` of body rank
        // `other` (`None`: fixed). No odometer is read without a narrow phase.
        let (spins, tolerance) = (&self.rank_spins, self.config.spin_tolerance);
        let narrow = |i: u32, rank: u32, key: u32, other: Option<u32>, f: &Frame<D>, g: &Frame<D>| {
            // A spinning pair: conservative.
            if !spins.is_empty() {
                let spin = |r: u32| spins.get(r as usize).copied().flatten();
                let (sf, sg) = (spin(rank), other.and_then(spin));
                if sf.is_some() || sg.is_some() {
                    return spinning_contact(detail, f, sf, g, sg, tolerance);
                }
            }
            if !coherent {
                return contact_of(detail, f, g);
            }
            let odo = apart.travelled(rank, other);
            if apart.is_apart(i, key, odo[1]) {
                return None;
            }
            let hit = contact_of(detail, f, g);
            if hit.is_none() {
                remember_apart(apart, i, key, odo, f, g);
            }
            hit
        };
        // The moving frame of the last slot's item, reused by its partners.
        let mut current: Option<(u32, &Meta, Frame<D>)> = None;
        let fixed_side = FixedSide { list: &self.static_grid, near: &self.near_fixed };
        for_each_candidate(&self.moving_grid, fixed_side, entries, &mut chunk.fixed, |item, partner| {
            // Items are store indices.
            let (me, frame) = match &current {
                Some((c, me, f)) if *c == item => (*me, f),
                _ => {
                    let me = &moving.meta[item as usize];
                    let (_, me, f) = current.insert((item, me, moved(item, me)));
                    (*me, &*f)
                }
            };
            // The filter first: a refused pair costs no frame copy.
            let hit = match partner {
                Partner::Moving(j) => {
                    let other = &moving.meta[j as usize];
                    me.pairs_with(other).then(|| {
                        (other, narrow(item, me.rank, moving_key(j), Some(other.rank), frame, &moved(j, other)))
                    })
                }
                Partner::Fixed(k) => {
                    let other = &fixed.meta[k as usize];
                    me.pairs_with(other)
                        .then(|| (other, narrow(item, me.rank, fixed_key(k), None, frame, &fixed.frames[k as usize])))
                }
            };
            if let Some((other, Some((aabb, time)))) = hit {
                let (a, b) = (me.id(), other.id());
                let (a, b) = if a < b { (a, b) } else { (b, a) };
                if out.len() < out.capacity() || grow(out) {
                    out.push(Contact { a, b, aabb, time });
                } else {
                    fits = false;
                }
            }
        });
        fits
    }

    /// Step 6: body pairs of this step, and what started or ended.
    fn update_events(&mut self) {
        std::mem::swap(&mut self.previous, &mut self.pairs);
        // Sorted as packed slot indices: a step's bodies are live, so their
        // slots name them, and the order is the handles' order.
        self.pair_keys.clear();
        let key = |c: &Contact<D>| u64::from(c.a.body.index) << 32 | u64::from(c.b.body.index);
        // Not `handle_of`: `self.pairs` is borrowed mutably beside it.
        let slots = &self.slots;
        let handle = |slot: u64| BodyHandle { index: slot as u32, generation: slots[slot as usize].generation };
        let pair = |&k: &u64| (handle(k >> 32), handle(k & u64::from(u32::MAX)));
        self.pairs.clear();
        // Both buffers have room (reserved with the contacts): no allocation.
        #[cfg(feature = "parallel")]
        {
            self.pair_keys.par_extend(self.contacts.par_iter().with_min_len(CHUNK).map(key));
            self.pair_keys.par_sort_unstable();
            self.pair_keys.dedup();
            self.pairs.par_extend(self.pair_keys.par_iter().with_min_len(CHUNK).map(pair));
        }
        #[cfg(not(feature = "parallel"))]
        {
            self.pair_keys.extend(self.contacts.iter().map(key));
            self.pair_keys.sort_unstable();
            self.pair_keys.dedup();
            self.pairs.extend(self.pair_keys.iter().map(pair));
        }
        self.events.clear();
        let (mut i, mut j) = (0, 0);
        while i < self.pairs.len() || j < self.previous.len() {
            let (now, before) = (self.pairs.get(i), self.previous.get(j));
            match (now, before) {
                (Some(a), Some(b)) if a == b => {
                    i += 1;
                    j += 1;
                }
                (Some(&(x, y)), Some(b)) if (x, y) < *b => {
                    self.events.push(ContactEvent::Started(x, y));
                    i += 1;
                }
                (Some(&(x, y)), None) => {
                    self.events.push(ContactEvent::Started(x, y));
                    i += 1;
                }
                (_, Some(&(x, y))) => {
                    if self.is_live(x) && self.is_live(y) {
                        self.events.push(ContactEvent::Ended(x, y));
                    }
                    j += 1;
                }
                (None, None) => break,
            }
        }
        self.events.sort_unstable();
    }

    /// Bodies removed since the previous step get no `Ended` event.
    fn is_live(&self, h: BodyHandle) -> bool {
        self.stored(h).is_ok()
    }

    /// Step 7: moving bodies advance; every so often the moving store is
    /// put back in the cell list's order (bodies drift out of it).
    fn advance(&mut self) {
        if self.spinning > 0 || !self.turns.is_empty() {
            self.remember_turns();
        }
        self.advance_poses();
        let shifts = &self.body_shift;
        let translate = |(f, m): (&mut Frame<D>, &Meta)| f.translate(&shifts[m.rank as usize]);
        #[cfg(feature = "parallel")]
        self.moving.frames.par_iter_mut().zip(&self.moving.meta).with_min_len(CHUNK).for_each(translate);
        #[cfg(not(feature = "parallel"))]
        self.moving.frames.iter_mut().zip(&self.moving.meta).for_each(translate);
        if !self.turns.is_empty() {
            self.turn_bodies();
        }
        // The store follows the cell list's slot order: after the first
        // step since the bodies changed, then every `RESORT_STEPS` steps.
        self.unsorted_steps = self.unsorted_steps.wrapping_add(1);
        if self.moving_fresh && (self.unsorted_steps == 1 || self.unsorted_steps.is_multiple_of(RESORT_STEPS)) {
            self.follow_slot_order();
        }
    }

    /// The moving bodies' poses translate by their displacements: in
    /// parallel over all the slots when most bodies move, else body by body
    /// (a mostly static world would sweep its fixed bodies' slots for
    /// nothing).
    fn advance_poses(&mut self) {
        let shift = |stored: &mut super::Stored<D>, d: &[f64; D]| {
            let t = stored.body.pose.translation_mut();
            for i in 0..D {
                t[i] += d[i];
            }
        };
        #[cfg(feature = "parallel")]
        if self.moving_bodies.len() >= self.slots.len() / 2 && self.slot_rank.len() == self.slots.len() {
            let shifts = &self.body_shift;
            self.slots.par_iter_mut().zip(&self.slot_rank).with_min_len(CHUNK).for_each(|(s, &r)| {
                if let (Some(stored), Some(d)) = (&mut s.stored, shifts.get(r as usize)) {
                    shift(stored, d);
                }
            });
            return;
        }
        for (&slot, d) in self.moving_bodies.iter().zip(&self.body_shift) {
            if let Some(stored) = &mut self.slots[slot as usize].stored {
                shift(stored, d);
            }
        }
    }

    /// Reorders the moving store as the moving list's slots (frames left out
    /// of the list after them), and tells the bodies where their frames went.
    fn follow_slot_order(&mut self) {
        let mut store = std::mem::take(&mut self.moving);
        let list = &self.moving_grid;
        store.reorder((0..list.len()).map(|p| list.item(p)), |m, i| {
            if let Some(stored) = &mut self.slots[m.slot as usize].stored {
                stored.at[m.frame as usize] = i;
            }
        });
        self.moving = store;
        // The frame of slot `p` is now at store index `p`: the list's ids
        // follow, so that queries after the step still name store indices.
        self.moving_grid.number_items_by_slot();
        self.rerank_bodies();
        self.apart_stale = true;
    }

    /// Ranks the moving bodies in the order their frames come in the store,
    /// so per-body data (the displacements above all) is read in sequence
    /// by the passes over the store. Permutes the per-body arrays to match,
    /// through the step's free scratch (no allocation once warm).
    fn rerank_bodies(&mut self) {
        let bodies = self.moving_bodies.len();
        let map = &mut self.rank_scratch;
        map.clear();
        map.resize(bodies, u32::MAX);
        let mut next = 0;
        for m in &mut self.moving.meta {
            let r = &mut map[m.rank as usize];
            if *r == u32::MAX {
                *r = next;
                next += 1;
            }
            m.rank = *r;
        }
        let map = &self.rank_scratch;
        self.next_shift.clear();
        self.next_shift.resize(bodies, [0.0; D]);
        for (old, d) in self.body_shift.iter().enumerate() {
            self.next_shift[map[old] as usize] = *d;
        }
        self.body_shift.copy_from_slice(&self.next_shift);
        for list in [&mut self.moving_bodies, &mut self.body_frames] {
            self.active.clear();
            self.active.resize(bodies, 0);
            for (old, &x) in list.iter().enumerate() {
                self.active[map[old] as usize] = x;
            }
            list.copy_from_slice(&self.active);
        }
        self.rank_slots();
    }

    /// `slot_rank` from `moving_bodies`.
    pub(super) fn rank_slots(&mut self) {
        self.slot_rank.clear();
        self.slot_rank.resize(self.slots.len(), u32::MAX);
        for (r, &slot) in self.moving_bodies.iter().enumerate() {
            self.slot_rank[slot as usize] = r as u32;
        }
    }
}

/// One parallel chunk's reused buffers: its contacts, and the scratch of
/// its fixed partners' queries.
#[derive(Clone, Debug, Default)]
pub(super) struct Chunk<const D: usize> {
    contacts: Vec<Contact<D>>,
    fixed: Vec<u32>,
}

/// Doubles a full contact buffer, fallibly (false when memory ran out).
#[cold]
fn grow<T>(out: &mut Vec<T>) -> bool {
    out.try_reserve(out.len().max(64)).is_ok()
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

/// Remembers pair (`i`, `key`), which FMB found apart, when the gap it ends
/// the step with outlasts at least one more step like this one (`odo`: the
/// two odometers' sum at the step's start and end).
#[inline]
fn remember_apart<const D: usize>(apart: &ApartPairs, i: u32, key: u32, odo: [f64; 2], f: &Frame<D>, g: &Frame<D>) {
    // A gap outrun within two steps at this step's pace saves at most one
    // test, about what finding it costs: only longer ones are remembered
    // (fast movers outrun most; measured in BENCHMARKS.md).
    if let Some(gap) = gap_exceeding(f, g, 2.0 * (odo[1] - odo[0])) {
        let threshold = gap + odo[1];
        if threshold.is_finite() {
            apart.remember(i, key, threshold);
        }
    }
}

/// The box and interval of a contact between two frames over the step
/// (moving ones carry their displacement), in the detail asked for.
#[inline(always)]
fn contact_of<const D: usize>(detail: ContactDetail, f: &Frame<D>, g: &Frame<D>) -> Option<(Aabb<D>, [f64; 2])> {
    match detail {
        ContactDetail::ExactBox => intersect(f, g).map(|hit| (hit.aabb, hit.time)),
        ContactDetail::Interval => {
            let time = overlap_interval(f, g)?;
            // Overlapping interiors: the swept boxes overlap.
            Some((f.aabb().intersection(&g.aabb()).unwrap_or(Aabb::EMPTY), time))
        }
        ContactDetail::Candidates => f.aabb().intersection(&g.aabb()).map(|b| (b, [0.0, 1.0])),
    }
}
