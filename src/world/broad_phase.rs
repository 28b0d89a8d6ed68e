//! The broad phase: where the frames are, and which pairs of them may meet.
//!
//! [`BroadPhase`] owns the two stores of placed frames (fixed and moving,
//! in flat arrays), the cell size, the fixed frames' cell list, the moving
//! frames' pair set (`pair_set.rs`, kept from step to step) or, in worlds
//! with a large body, their cell list (rebuilt every step unless nothing
//! moves), the near lists, the pairs remembered apart, the moving bodies'
//! ranks and the links of large bodies. The world tells it what changed (`changed`, `reposed`,
//! `turns_changed`, `stopped`); a step brings it up to date
//! (`refresh`, then `update` with the step's motion), reads the candidate
//! pairs off its lists (`narrow_phase.rs`), then has it follow the moving
//! frames (`follow`). Box and ray queries read its lists while they
//! describe the frames (`fixed_list`, `moving_list`, `query_box`); the
//! tolerance query has its own list of grown boxes (`list_grown`).

use super::Motion;
use super::apart::ApartPairs;
use super::context::StepContext;
use super::pair_set::PairSet;
use super::spin::frame_box;
use super::store::{Meta, Store};
use super::{Slot, Stored};
use crate::aabb::Aabb;
use crate::fallible::{NoRoom, refill, room, room_for_one};
use crate::frame::Frame;
use crate::grid::{CellList, CellSize, GridBox, NearLists, cell_size_for};
use crate::ids::FrameId;
use crate::pairs::MovingSide;

/// Bodies with at least this many frames get the body-level pruning of
/// [`BroadPhase::list_moving`].
pub(super) const LARGE_BODY: u32 = 64;

/// A large body reaching more fixed frames than this queries the fixed
/// list for each of its frames instead of testing them one by one.
const FIXED_FEW: usize = 32;

/// The mark of a large body reaching many fixed frames.
pub(super) const FIXED_MANY: u32 = u32::MAX;

/// Steps between re-sorts of the moving store into the cell list's order.
const RESORT_STEPS: u32 = 32;

/// The stores of placed frames and the lists over them.
#[derive(Clone, Debug)]
pub(super) struct BroadPhase<const D: usize> {
    /// Base cell size of every list.
    pub cell: CellSize,
    /// The fixed frames and their metadata. Whoever changes them calls
    /// [`BroadPhase::changed`] or [`BroadPhase::reposed`].
    pub fixed: Store<D>,
    /// The moving frames and their metadata, likewise; the step itself
    /// moves them (advance, turns) and keeps the lists' invariants.
    pub moving: Store<D>,
    /// True when the fixed store holds no removed frame, is in curve
    /// order, and `static_grid` lists exactly its frames (ids are store
    /// indices) at the current cell size, with `near_fixed` naming its
    /// slots. False from an insertion, removal or re-pose of a fixed body
    /// to the next refresh.
    fixed_fresh: bool,
    /// True when the moving store holds no removed frame and the ranks
    /// below (`moving_bodies`, `slot_rank`, `body_frames`,
    /// `largest_body`, every meta's `rank`) describe it. False from an
    /// insertion or removal of a moving body to the next refresh.
    moving_fresh: bool,
    /// The fixed frames' cell list: built once per change of the fixed set
    /// and only queried (its build scratch freed).
    pub static_grid: CellList<D>,
    /// The moving frames' swept boxes of the last step; ids are store
    /// indices (kept so by `follow_slot_order`). Describes the frames
    /// while `listed_at == edits` (see [`BroadPhase::moving_list`]).
    pub moving_grid: CellList<D>,
    /// Per moving frame (store index), the fixed frames' slots near it;
    /// cleared whenever the fixed list changes.
    pub near_fixed: NearLists<D>,
    /// Candidate pairs FMB found apart, and the moving bodies' odometers
    /// (`apart.rs`); it knows itself when store indices or ranks changed.
    pub apart: ApartPairs,
    /// The moving frames' fat boxes, their persistent grid and pairs
    /// (`pair_set.rs`): the moving side of worlds without large bodies.
    pair_set: PairSet<D>,
    /// True when the last update used the pair set (no large body) rather
    /// than the moving list and its pairs pass.
    persistent: bool,
    /// The moving bodies' slots by rank: slot order after a refresh, the
    /// order of their frames in the store after a re-sort.
    pub moving_bodies: Vec<u32>,
    /// The inverse: per slot, the rank of its moving body, or `u32::MAX`.
    pub slot_rank: Vec<u32>,
    /// Per moving body (by rank): frame count; and the largest.
    body_frames: Vec<u32>,
    largest_body: u32,
    /// The moving frames that enter the moving list (store indices).
    active: Vec<u32>,
    /// Per moving body (by rank): swept boxes and their grid (only built
    /// when some body is large).
    body_boxes: Vec<Aabb<D>>,
    body_grid: CellList<D>,
    /// Per large body (by rank): the bodies its box reaches, as
    /// `body_links[body_link_starts[r]..body_link_starts[r + 1]]`, and the
    /// fixed frames, likewise (or [`FIXED_MANY`] alone).
    body_links: Vec<u32>,
    body_link_starts: Vec<u32>,
    body_fixed: Vec<u32>,
    body_fixed_starts: Vec<u32>,
    /// Steps since the moving store was last put back in spatial order.
    unsorted_steps: u32,
    /// Old rank → new rank while the moving bodies are re-ranked, and the
    /// permutation's scratch.
    rank_scratch: Vec<u32>,
    /// Scratch of the automatic cell size.
    scratch: Vec<f64>,
    /// Scratch list of [`World::pairs_within`](super::World::pairs_within).
    proximity_grid: CellList<D>,
    /// Changes since the world was made: insertions, removals, re-poses and
    /// parked bodies. Whatever was computed at another count (the moving
    /// list's coverage, the narrow phase's contacts) no longer describes
    /// the frames.
    edits: u64,
    /// The count at which the moving list was last brought up to date, by
    /// a step (`u64::MAX`: never).
    listed_at: u64,
    /// Times the moving bodies' ranks were made afresh (not permuted with
    /// the arrays by rank: a refresh of the moving store, a restore).
    ranks_made: u64,
    /// True when the moving list was built from displacements all `+0.0`,
    /// no body turning: while nothing changed and nothing moves, the frames
    /// are where it has them and it is rebuilt as it is.
    listed_still: bool,
}

impl<const D: usize> BroadPhase<D> {
    /// An empty broad phase of base cell size `cell`.
    pub fn new(cell: CellSize) -> Self {
        BroadPhase {
            cell,
            fixed: Store::default(),
            moving: Store::default(),
            fixed_fresh: true,
            moving_fresh: true,
            static_grid: CellList::default(),
            moving_grid: CellList::default(),
            near_fixed: NearLists::default(),
            apart: ApartPairs::default(),
            pair_set: PairSet::default(),
            persistent: false,
            moving_bodies: Vec::new(),
            slot_rank: Vec::new(),
            body_frames: Vec::new(),
            largest_body: 0,
            active: Vec::new(),
            body_boxes: Vec::new(),
            body_grid: CellList::default(),
            body_links: Vec::new(),
            body_link_starts: Vec::new(),
            body_fixed: Vec::new(),
            body_fixed_starts: Vec::new(),
            unsorted_steps: 0,
            rank_scratch: Vec::new(),
            scratch: Vec::new(),
            proximity_grid: CellList::default(),
            edits: 0,
            listed_at: u64::MAX,
            ranks_made: 0,
            listed_still: false,
        }
    }

    /// The store of `motion`.
    pub fn store(&self, motion: Motion) -> &Store<D> {
        match motion {
            Motion::Fixed => &self.fixed,
            Motion::Moving => &self.moving,
        }
    }

    /// The store of `motion`, to change: call [`BroadPhase::changed`] or
    /// [`BroadPhase::reposed`] too.
    pub fn store_mut(&mut self, motion: Motion) -> &mut Store<D> {
        match motion {
            Motion::Fixed => &mut self.fixed,
            Motion::Moving => &mut self.moving,
        }
    }

    /// Whether the store of `motion` is up to date (see the fields).
    pub fn is_fresh(&self, motion: Motion) -> bool {
        match motion {
            Motion::Fixed => self.fixed_fresh,
            Motion::Moving => self.moving_fresh,
        }
    }

    /// How many times the moving ranks were made afresh (see `ranks_made`):
    /// an array by rank made at another count names other bodies.
    pub fn ranks_made(&self) -> u64 {
        self.ranks_made
    }

    /// Moving body `slot`'s rank, as last made (`None`: not ranked).
    pub fn rank_of(&self, slot: u32) -> Option<u32> {
        self.slot_rank.get(slot as usize).copied().filter(|&r| r != u32::MAX)
    }

    /// The count of changes (see `edits`).
    pub fn edits(&self) -> u64 {
        self.edits
    }

    /// A body of `motion` was inserted or removed: its store is compacted
    /// (and for fixed frames, the static grid rebuilt) at the next refresh.
    pub fn changed(&mut self, motion: Motion) {
        self.edits = self.edits.wrapping_add(1);
        match motion {
            Motion::Fixed => self.fixed_fresh = false,
            Motion::Moving => self.moving_fresh = false,
        }
    }

    /// A body of `motion` whose frames start at store index `first` was
    /// moved to a new pose: a fixed one rebuilds the static grid; a moving
    /// one's pairs found apart no longer are, as far as we know.
    pub fn reposed(&mut self, motion: Motion, first: Option<u32>) {
        self.edits = self.edits.wrapping_add(1);
        match motion {
            Motion::Fixed => self.fixed_fresh = false,
            Motion::Moving => {
                if let Some(m) = first.and_then(|i| self.moving.meta.get(i as usize)) {
                    self.apart.teleported(m.rank);
                }
            }
        }
    }

    /// A body started or stopped turning: the pairs remembered apart were
    /// certified for translation only.
    pub fn turns_changed(&mut self) {
        self.apart.forget();
    }

    /// A moving body was stopped (parked): the step's record of it (the
    /// moving list, the contacts) no longer holds.
    pub fn stopped(&mut self, turned: bool) {
        if turned {
            self.turns_changed();
        }
        self.edits = self.edits.wrapping_add(1);
    }

    /// A step prepared when the count of changes was `edits` was called
    /// off (the world undid its parking): the count is set back, so that
    /// what the last step found describes the frames again; the moving
    /// list, rebuilt for the step called off, is no longer offered to
    /// queries (they test every frame until the next step); the pairs
    /// remembered apart are forgotten, since their proofs assumed the
    /// step's motion (the next step starts afresh, with the same answers).
    pub fn aborted(&mut self, edits: u64) {
        self.edits = edits;
        self.listed_at = u64::MAX;
        // The pair set holds for the frames where they are (the step
        // called off moved none): its pairs and fat boxes stay.
        self.apart.forget();
    }

    /// The fixed frames' list, when it lists them as they are.
    pub fn fixed_list(&self) -> Option<&CellList<D>> {
        self.fixed_fresh.then_some(&self.static_grid)
    }

    /// The moving frames' list, from a step until anything changes: its
    /// swept boxes contain the frames' boxes now, and its ids are store
    /// indices. Frames of large bodies may be left out of it
    /// ([`BroadPhase::unlisted`]).
    pub fn moving_list(&self) -> Option<&CellList<D>> {
        if self.listed_at != self.edits {
            return None;
        }
        if self.persistent { self.pair_set.swept_list() } else { Some(&self.moving_grid) }
    }

    /// In the pair set's persistent mode, from a step until anything
    /// changes, calls `f(i)` once for each moving frame `i` (store index)
    /// whose fat box, which contains its box now, overlaps `q`, and returns
    /// true; else calls nothing and returns false.
    pub fn query_fat(&self, q: &Aabb<D>, f: impl FnMut(u32)) -> bool {
        self.persistent && self.listed_at == self.edits && self.pair_set.query_fat(&GridBox::new(q), f)
    }

    /// Whether this step's candidates come from pairs kept from the steps
    /// before (the pair set's persistent mode).
    pub fn kept_pairs_used(&self) -> bool {
        self.persistent && self.pair_set.kept()
    }

    /// The moving frames' swept boxes this step (store order), while the
    /// pair set gives the candidates; `None` otherwise.
    pub fn swept_boxes(&self) -> Option<&[Aabb<D>]> {
        (self.persistent && self.pair_set.is_valid()).then(|| self.pair_set.swept_boxes())
    }

    /// Where the step's candidate pass finds each entry's moving partners:
    /// the pair set, else the moving list's pass.
    pub fn moving_side(&self) -> MovingSide<'_, D> {
        if self.persistent { MovingSide::Set(self.pair_set.side()) } else { MovingSide::Pass(&self.moving_grid) }
    }

    /// The entries of the step's candidate pass: the moving frames (store
    /// order) with the pair set, else the moving list's slots.
    pub fn candidate_entries(&self) -> usize {
        if self.persistent { self.moving.len() } else { self.moving_grid.len() }
    }

    /// True for moving frame `i` of a large body, which the moving list
    /// may leave out.
    #[inline]
    pub fn unlisted(&self, i: usize) -> bool {
        self.largest_body >= LARGE_BODY && self.body_frames[self.moving.meta[i].rank as usize] >= LARGE_BODY
    }

    /// The frames whose boxes meet `aabb` (not empty), into `out`,
    /// unsorted: through the lists while they describe the frames, else
    /// every frame tested.
    pub fn query_box(&self, aabb: &Aabb<D>, out: &mut Vec<FrameId>) {
        let (fixed, moving) = (&self.fixed, &self.moving);
        match self.fixed_list() {
            Some(list) => list.query(aabb, |k| {
                // The grid's boxes are rounded outward: confirm exactly.
                if fixed.frames[k as usize].aabb().intersects(aabb) {
                    out.push(fixed.meta[k as usize].id());
                }
            }),
            None => out.extend(fixed.live().filter(|(f, _)| f.aabb().intersects(aabb)).map(|(_, m)| m.id())),
        }
        let hit = |i: usize| moving.frames[i].aabb().intersects(aabb);
        if self.query_fat(aabb, |i| {
            if hit(i as usize) {
                out.push(moving.meta[i as usize].id());
            }
        }) {
            return;
        }
        let Some(list) = self.moving_list() else {
            out.extend(moving.live().filter(|(f, _)| f.aabb().intersects(aabb)).map(|(_, m)| m.id()));
            return;
        };
        // The list holds each listed frame's box swept over the last step,
        // which contains its box now: a superset, confirmed exactly.
        // Without large bodies every frame is listed: no per-frame test.
        list.query(aabb, |i| {
            let i = i as usize;
            if !self.unlisted(i) && hit(i) {
                out.push(moving.meta[i].id());
            }
        });
        if self.largest_body >= LARGE_BODY {
            out.extend((0..moving.len()).filter(|&i| self.unlisted(i) && hit(i)).map(|i| moving.meta[i].id()));
        }
    }

    /// Brings the stores, the cell size and the static grid up to date with
    /// the bodies inserted, removed or re-posed since the last step
    /// (`cell_size`: the world's setting); tells the bodies in `slots`
    /// where their frames went.
    ///
    /// # Errors
    /// [`NoRoom`] when memory ran out: a store left stale stays so (its
    /// lists list nothing), and the next refresh starts it again.
    pub fn refresh(&mut self, cell_size: Option<f64>, slots: &mut [Slot<D>]) -> Result<(), NoRoom> {
        if !self.fixed_fresh {
            room(&mut self.scratch, self.fixed.len() + self.moving.len())?;
            self.cell = match cell_size {
                Some(w) => CellSize::new(w),
                None => {
                    let all = self.fixed.live().chain(self.moving.live()).map(|(f, _)| f.aabb());
                    cell_size_for(all, &mut self.scratch)
                }
            };
            self.compact(Motion::Fixed, slots)?;
            self.build_static_grid()?;
            self.fixed_fresh = true;
        }
        if !self.moving_fresh {
            let bodies = self.moving.live().filter(|(_, m)| m.frame == 0).count();
            room(&mut self.scratch, self.moving.len())?;
            room(&mut self.moving_bodies, bodies)?;
            room(&mut self.body_frames, bodies)?;
            room(&mut self.slot_rank, slots.len())?;
            if self.fixed.len() == 0 && cell_size.is_none() {
                self.cell = cell_size_for(self.moving.live().map(|(f, _)| f.aabb()), &mut self.scratch);
            }
            self.compact(Motion::Moving, slots)?;
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
            self.rank_slots(slots.len());
            self.ranks_made = self.ranks_made.wrapping_add(1);
            self.moving_fresh = true;
        }
        Ok(())
    }

    /// A restored world's stores (in place) were saved fresh or not, as
    /// `fresh` (fixed, moving) says; the static grid is rebuilt if fresh.
    /// The moving ranks are the restorer's to set when moving is fresh.
    pub fn restored(&mut self, fresh: (bool, bool), unsorted_steps: u32) {
        (self.fixed_fresh, self.moving_fresh) = fresh;
        self.unsorted_steps = unsorted_steps;
        // On low memory the static grid lists nothing: the next refresh
        // builds it.
        if self.fixed_fresh && self.build_static_grid().is_err() {
            self.fixed_fresh = false;
        }
    }

    /// The fixed frames' cell list, built once per change of the fixed set
    /// and only queried: its build scratch is freed.
    fn build_static_grid(&mut self) -> Result<(), NoRoom> {
        let frames = &self.fixed.frames;
        self.near_fixed.clear();
        self.static_grid.build(self.cell, frames.len(), |k| (frames[k].aabb(), k as u32), None)?;
        self.static_grid.release_scratch();
        Ok(())
    }

    /// Compacts and spatially orders one store, updating the bodies' indices.
    fn compact(&mut self, motion: Motion, slots: &mut [Slot<D>]) -> Result<(), NoRoom> {
        let cell = self.cell;
        // The moving store is re-sorted every few steps: it keeps its scratch.
        self.store_mut(motion).compact(&cell, motion == Motion::Moving, |m, i| tell(slots, m, i))?;
        // Store indices changed: the pairs remembered apart and the pair
        // set name others.
        self.apart.forget();
        self.pair_set.forget();
        if motion == Motion::Moving {
            self.unsorted_steps = 0;
        }
        Ok(())
    }

    /// Steps 1b–3 of a step, with its motion: the odometers, the moving
    /// list of swept boxes, and the near lists. `coherent`: the step has a
    /// narrow phase whose rejections are remembered.
    ///
    /// # Errors
    /// [`NoRoom`] when memory ran out: what was being built lists nothing
    /// (or is forgotten) until the next step's update builds it again.
    pub fn update(&mut self, ctx: &StepContext<'_, D>, coherent: bool) -> Result<(), NoRoom> {
        self.start_coherence(ctx, coherent)?;
        self.persistent = self.largest_body < LARGE_BODY;
        if self.persistent {
            self.pair_set.update(&self.moving, self.cell, ctx, self.largest_body > 1)?;
        } else {
            self.pair_set.forget();
            self.list_moving(ctx)?;
        }
        self.refresh_near_fixed(ctx)
    }

    /// Step 1b: the odometers of temporal coherence (`apart.rs`) take this
    /// step's displacements, after a reset if store indices changed. Without
    /// a narrow phase nothing is remembered, and the odometers would fall
    /// behind: the next step with one starts afresh.
    fn start_coherence(&mut self, ctx: &StepContext<'_, D>, coherent: bool) -> Result<(), NoRoom> {
        if !coherent {
            self.apart.forget();
            return Ok(());
        }
        self.apart.begin_step(self.moving.len(), self.moving_bodies.len(), ctx.shifts)
    }

    /// Steps 2–3: swept boxes of the moving frames into the moving grid.
    ///
    /// Frames of a body with many frames (a mesh) sit in crowded cells next
    /// to their own body's frames, which they never pair with: such a frame
    /// enters the grid only if its box reaches another body's box or a fixed
    /// frame. Otherwise it cannot pair with anything, so leaving it out
    /// changes no answer. A still list of still frames is kept as it is.
    fn list_moving(&mut self, ctx: &StepContext<'_, D>) -> Result<(), NoRoom> {
        let still = ctx.still();
        if still && self.listed_still && self.listed_at == self.edits {
            // Built from these frames, unmoved, with these displacements:
            // a build would give the list as it is.
            return Ok(());
        }
        // Not still until built (a failed build lists nothing).
        self.listed_still = false;
        let swept = |f: &Frame<D>, m: &Meta| frame_box(ctx.spins, f, m, &ctx.shifts[m.rank as usize]);
        self.active.clear();
        room(&mut self.active, self.moving.len())?;
        if self.largest_body < LARGE_BODY {
            self.active.extend(0..self.moving.len() as u32);
        } else {
            self.link_bodies(swept)?;
            self.activate_reaching(swept);
        }
        // Each item carries its store index as id.
        let (active, moving) = (&self.active, &self.moving);
        let item = |k: usize| {
            let i = active[k] as usize;
            (swept(&moving.frames[i], &moving.meta[i]), i as u32)
        };
        // Grouped by body when bodies have several frames: the pairs pass
        // skips a body's own frames.
        let body = |k: usize| moving.meta[active[k] as usize].rank;
        let group: Option<&dyn Fn(usize) -> u32> = (self.largest_body > 1).then_some(&body);
        self.moving_grid.build(self.cell, active.len(), item, group)?;
        self.listed_still = still;
        Ok(())
    }

    /// The moving frames that enter the list when some body is large: every
    /// frame of a small body, and a large body's frames whose box (`swept`)
    /// reaches a body it is linked to or a fixed frame.
    fn activate_reaching(&mut self, swept: impl Fn(&Frame<D>, &Meta) -> Aabb<D>) {
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
            let b = swept(f, m);
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

    /// Step 3b: each moving frame's near list into the fixed list
    /// (`grid/near.rs`), looked up again only for frames that left their
    /// fat box. Frames of large bodies query the fixed list directly (most
    /// of them never reach the pairs pass).
    fn refresh_near_fixed(&mut self, ctx: &StepContext<'_, D>) -> Result<(), NoRoom> {
        if self.static_grid.is_empty() {
            return Ok(());
        }
        let (moving, frames) = (&self.moving, &self.body_frames);
        let frame = |i: usize| {
            let m = &moving.meta[i];
            let d = ctx.shifts[m.rank as usize];
            (frames[m.rank as usize] < LARGE_BODY).then(|| (frame_box(ctx.spins, &moving.frames[i], m, &d), d))
        };
        self.near_fixed.refresh(&self.static_grid, moving.len(), frame)
    }

    /// The moving bodies' boxes (by rank: the union of `frame_box` over
    /// their frames), their cell list, and each large body's links to the
    /// bodies and fixed frames its box reaches ([`BroadPhase::link_large_bodies`]).
    fn link_bodies(&mut self, frame_box: impl Fn(&Frame<D>, &Meta) -> Aabb<D>) -> Result<(), NoRoom> {
        refill(&mut self.body_boxes, self.moving_bodies.len(), Aabb::EMPTY)?;
        for (f, m) in self.moving.frames.iter().zip(&self.moving.meta) {
            let r = m.rank as usize;
            self.body_boxes[r] = self.body_boxes[r].union(&frame_box(f, m));
        }
        let boxes = &self.body_boxes;
        self.body_grid.build(self.cell, boxes.len(), |r| (boxes[r], r as u32), None)?;
        self.link_large_bodies()
    }

    /// For each large moving body, the other moving bodies whose boxes its
    /// box reaches (`body_links`, by rank) and the fixed frames it reaches
    /// (`body_fixed`, or [`FIXED_MANY`] alone when there are more than
    /// [`FIXED_FEW`]): a frame of the body can only pair with those. Small
    /// bodies' frames all enter the list; they get no links.
    fn link_large_bodies(&mut self) -> Result<(), NoRoom> {
        let bodies = self.body_boxes.len();
        refill(&mut self.body_link_starts, 1, 0)?;
        refill(&mut self.body_fixed_starts, 1, 0)?;
        room(&mut self.body_link_starts, bodies + 1)?;
        room(&mut self.body_fixed_starts, bodies + 1)?;
        self.body_links.clear();
        self.body_fixed.clear();
        let mut fits = true;
        for (r, b) in self.body_boxes.iter().enumerate() {
            if self.body_frames[r] >= LARGE_BODY {
                self.body_grid.query(b, |o| {
                    if o as usize == r {
                        return;
                    }
                    if room_for_one(&mut self.body_links) {
                        self.body_links.push(o);
                    } else {
                        fits = false;
                    }
                });
                // At most `FIXED_FEW + 1` kept: a mesh over a million fixed
                // frames must not grow the list to a million.
                let from = self.body_fixed.len();
                fits &= room(&mut self.body_fixed, from + FIXED_FEW + 1).is_ok();
                self.static_grid.query(b, |k| {
                    if self.body_fixed.len() - from <= FIXED_FEW && self.body_fixed.len() < self.body_fixed.capacity() {
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
        if fits { Ok(()) } else { Err(NoRoom { bytes: 2 * self.body_links.len() * 4 }) }
    }

    /// Step 7, after the moving frames advanced: the moving list describes
    /// them until the next change; after the first step since the bodies
    /// changed, then every `RESORT_STEPS` steps, the store is put back in
    /// the list's order (bodies drift out of it), the bodies in `slots`
    /// told where their frames went and `shifts` (by rank) re-ranked with
    /// them (`scratch`: a free buffer of the same kind). With the pair set,
    /// which keeps the store's order (compaction's, spatial), only the
    /// ranks follow the store, once.
    pub fn follow(&mut self, slots: &mut [Slot<D>], by_rank: ByRank<'_, D>, scratch: &mut Vec<[f64; D]>) {
        self.listed_at = self.edits;
        self.unsorted_steps = self.unsorted_steps.wrapping_add(1);
        if !self.moving_fresh {
            return;
        }
        if self.persistent {
            if self.unsorted_steps == 1 && !self.ranked_in_store_order() {
                self.rerank_bodies(slots.len(), by_rank, scratch);
                // The odometers are by rank.
                self.apart.forget();
            }
        } else if self.unsorted_steps == 1 || self.unsorted_steps.is_multiple_of(RESORT_STEPS) {
            self.follow_slot_order(slots, by_rank, scratch);
        }
    }

    /// Room for [`BroadPhase::follow`] after this step, in the step's
    /// fallible half (`scratch`: the buffer `follow` will be given), so
    /// that the commit allocates nothing.
    ///
    /// # Errors
    /// [`NoRoom`], nothing changed but capacity.
    pub fn reserve_follow(&mut self, scratch: &mut Vec<[f64; D]>) -> Result<(), NoRoom> {
        let bodies = self.moving_bodies.len();
        room(&mut self.rank_scratch, bodies)?;
        room(&mut self.active, bodies)?;
        room(scratch, bodies)?;
        self.moving.reserve_reorder()
    }

    /// Reorders the moving store as the moving list's slots (frames left out
    /// of the list after them), and tells the bodies where their frames went.
    fn follow_slot_order(&mut self, slots: &mut [Slot<D>], by_rank: ByRank<'_, D>, scratch: &mut Vec<[f64; D]>) {
        if self.in_slot_order() {
            // Bodies at rest stay in order: nothing to move, and the pairs
            // remembered (apart, kept, at rest) still name their frames.
            return;
        }
        let list = &self.moving_grid;
        self.moving.reorder((0..list.len()).map(|p| list.item(p)), |m, i| tell(slots, m, i));
        // The frame of slot `p` is now at store index `p`: the list's ids
        // follow, so that queries after the step still name store indices.
        self.moving_grid.number_items_by_slot();
        self.rerank_bodies(slots.len(), by_rank, scratch);
        self.apart.forget();
    }

    /// True when the store is in the moving list's order (slot `p` holds
    /// store index `p`) and the ranks in the store's: a re-sort would
    /// change nothing.
    fn in_slot_order(&self) -> bool {
        let list = &self.moving_grid;
        (0..list.len()).all(|p| list.item(p) == p as u32) && self.ranked_in_store_order()
    }

    /// True when the moving bodies are ranked in the order their frames
    /// first come in the store: passes over the store read arrays by rank
    /// in sequence.
    fn ranked_in_store_order(&self) -> bool {
        let mut next = 0;
        let ranked = |m: &Meta| {
            next += u32::from(m.rank == next);
            m.rank < next
        };
        self.moving.meta.iter().all(ranked)
    }

    /// Ranks the moving bodies in the order their frames come in the store,
    /// so per-body data (the displacements above all) is read in sequence
    /// by the passes over the store. Permutes the per-body arrays to match,
    /// through free scratch (no allocation once warm).
    fn rerank_bodies(&mut self, slot_count: usize, by_rank: ByRank<'_, D>, scratch: &mut Vec<[f64; D]>) {
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
        for v in by_rank {
            // A per-rank array of another length is not kept by rank.
            if v.len() == bodies {
                scratch.clear();
                scratch.resize(bodies, [0.0; D]);
                for (old, d) in v.iter().enumerate() {
                    scratch[map[old] as usize] = *d;
                }
                v.copy_from_slice(scratch);
            }
        }
        for list in [&mut self.moving_bodies, &mut self.body_frames] {
            self.active.clear();
            self.active.resize(bodies, 0);
            for (old, &x) in list.iter().enumerate() {
                self.active[map[old] as usize] = x;
            }
            list.copy_from_slice(&self.active);
        }
        self.rank_slots(slot_count);
    }

    /// `slot_rank` from `moving_bodies`, for `slot_count` slots.
    pub fn rank_slots(&mut self, slot_count: usize) {
        self.slot_rank.clear();
        self.slot_rank.resize(slot_count, u32::MAX);
        for (r, &slot) in self.moving_bodies.iter().enumerate() {
            self.slot_rank[slot as usize] = r as u32;
        }
    }

    /// Bytes held (grids, flat lists, metadata; not the frames).
    pub fn memory(&self) -> usize {
        self.static_grid.memory()
            + self.moving_grid.memory()
            + self.near_fixed.memory()
            + self.apart.memory()
            + self.pair_set.memory()
            + self.proximity_grid.memory()
            + self.body_grid.memory()
            + (self.active.capacity() + self.body_frames.capacity()) * 4
            + self.body_boxes.capacity() * size_of::<Aabb<D>>()
            + (self.body_links.capacity() + self.body_link_starts.capacity()) * 4
            + (self.body_fixed.capacity() + self.body_fixed_starts.capacity()) * 4
            + self.fixed.meta_memory()
            + self.moving.meta_memory()
            + (self.moving_bodies.capacity() + self.slot_rank.capacity() + self.rank_scratch.capacity()) * 4
    }

    /// The moving frames' boxes grown by `delta / 2` in the proximity list
    /// (ids: store indices, grouped by body), for
    /// [`World::pairs_within`](super::World::pairs_within); the stores must
    /// be fresh. Every moving frame, but for bodies of many frames (meshes)
    /// only those whose grown box reaches another moving body's box grown
    /// by `delta` (as a step does with swept boxes, through the same body
    /// links); each large body is linked to the fixed frames its grown box
    /// reaches ([`BroadPhase::body_fixed`]).
    ///
    /// # Errors
    /// [`NoRoom`], the list then listing nothing.
    pub fn list_grown(&mut self, delta: f64) -> Result<(), NoRoom> {
        self.active.clear();
        room(&mut self.active, self.moving.len())?;
        if self.largest_body < LARGE_BODY {
            self.active.extend(0..self.moving.len() as u32);
        } else {
            self.link_bodies(|f, _| f.aabb().grown(delta))?;
            let (links, starts) = (&self.body_links, &self.body_link_starts);
            for (i, (f, m)) in self.moving.frames.iter().zip(&self.moving.meta).enumerate() {
                let r = m.rank as usize;
                let b = f.aabb().grown(delta / 2.0);
                let near = &links[starts[r] as usize..starts[r + 1] as usize];
                if self.body_frames[r] < LARGE_BODY || near.iter().any(|&o| b.intersects(&self.body_boxes[o as usize]))
                {
                    self.active.push(i as u32);
                }
            }
        }
        let half = delta / 2.0;
        let (moving, active) = (&self.moving, &self.active);
        let item = |k: usize| {
            let i = active[k] as usize;
            (moving.frames[i].aabb().grown(half), i as u32)
        };
        let body = |k: usize| moving.meta[active[k] as usize].rank;
        self.proximity_grid.build(self.cell, active.len(), item, Some(&body))
    }

    /// The list of [`BroadPhase::list_grown`].
    pub fn grown_list(&self) -> &CellList<D> {
        &self.proximity_grid
    }

    /// The fixed frames moving body `rank` was last linked to (by a step
    /// or [`BroadPhase::list_grown`]), or [`FIXED_MANY`] alone: always so
    /// for a small body (its frames query the fixed list).
    pub fn body_fixed(&self, rank: u32) -> &[u32] {
        let r = rank as usize;
        if self.body_frames[r] < LARGE_BODY {
            return &[FIXED_MANY];
        }
        &self.body_fixed[self.body_fixed_starts[r] as usize..self.body_fixed_starts[r + 1] as usize]
    }

    /// The moving bodies' ranks as a restored snapshot lists them (checked
    /// by the restorer): their slots and frame counts by rank.
    pub fn set_ranks(&mut self, moving_bodies: Vec<u32>, body_frames: Vec<u32>, slot_count: usize) {
        self.largest_body = body_frames.iter().copied().max().unwrap_or(0);
        self.body_frames = body_frames;
        self.moving_bodies = moving_bodies;
        self.rank_slots(slot_count);
        self.ranks_made = self.ranks_made.wrapping_add(1);
    }

    /// Steps since the moving store was last put back in spatial order.
    pub fn unsorted_steps(&self) -> u32 {
        self.unsorted_steps
    }

    /// Panics unless the invariants stated on the fields hold (for
    /// `slot_count` slots). Linear in the frames: debug builds and tests.
    pub fn validate(&self, slot_count: usize) {
        if self.fixed_fresh {
            assert!(self.fixed.meta.iter().all(Meta::live), "a fresh fixed store holds removed frames");
            assert_eq!(self.static_grid.len(), self.fixed.len(), "the static grid lists the fixed store");
        }
        if self.moving_fresh {
            let moving = &self.moving;
            assert!(moving.meta.iter().all(Meta::live), "a fresh moving store holds removed frames");
            let bodies = self.moving_bodies.len();
            assert_eq!(self.body_frames.len(), bodies, "one frame count a moving body");
            let mut frames = vec![0u32; bodies];
            for m in &moving.meta {
                assert_eq!(self.moving_bodies.get(m.rank as usize), Some(&m.slot), "a frame's rank names its body");
                frames[m.rank as usize] += 1;
            }
            assert_eq!(frames, self.body_frames, "frame counts by rank");
            assert_eq!(self.largest_body, frames.iter().copied().max().unwrap_or(0));
            assert!(self.slot_rank.len() <= slot_count);
            for (r, &slot) in self.moving_bodies.iter().enumerate() {
                assert_eq!(self.slot_rank.get(slot as usize), Some(&(r as u32)), "slot_rank inverts the ranks");
            }
            self.apart.validate(moving.len(), bodies);
            if self.pair_set.is_valid() && self.pair_set.len() == moving.len() {
                self.pair_set.validate(|i| moving.meta[i].rank);
            }
        }
        if let Some(list) = self.moving_list() {
            assert!((0..list.len()).all(|p| (list.item(p) as usize) < self.moving.len()), "list ids are store indices");
            if self.listed_still {
                // Built from displacements of zero: the frames' own boxes.
                let own = |p: usize| GridBox::new(&self.moving.frames[list.item(p) as usize].aabb());
                assert!((0..list.len()).all(|p| list.grid_box(p) == own(p)), "a still list holds the frames' boxes");
            }
        }
    }
}

/// The world's arrays by moving body rank that a re-ranking permutes with
/// the ranks: the step's displacements and the velocities' copy.
pub(super) type ByRank<'a, const D: usize> = [&'a mut [[f64; D]]; 2];

/// Tells the body of the frame `m` in `slots` that the frame is now at
/// store index `i`.
fn tell<const D: usize>(slots: &mut [Slot<D>], m: &Meta, i: u32) {
    if let Some(Stored { at, .. }) = &mut slots[m.slot as usize].stored {
        at[m.frame as usize] = i;
    }
}
