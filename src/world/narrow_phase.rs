//! The narrow phase of a step: the broad phase's candidate pairs through
//! FMB into contacts, then body pairs and events (steps 4–6 of `step.rs`).
//!
//! [`NarrowPhase`] owns the per-chunk buffers the candidate pass writes in
//! parallel, the last step's (`resting.rs`), and the step's results:
//! contacts, body pairs and events.

use std::sync::atomic::{AtomicBool, Ordering};

#[cfg(feature = "parallel")]
use rayon::prelude::*;

use super::apart::{ApartPairs, fixed_key, moving_key};
use super::broad_phase::BroadPhase;
use super::chunk::Chunk;
use super::context::StepContext;
use super::radix_sort::sort_keys;
use super::resting::RestingContacts;
use super::spin::spinning_contact;
use super::store::Meta;
use super::{Slot, WorldConfig};
use crate::aabb::Aabb;
use crate::contact::{Contact, ContactDetail, ContactEvent};
use crate::error::WorldError;
use crate::fallible::{room_for, room_for_one};
use crate::frame::Frame;
use crate::ids::BodyHandle;
use crate::narrow::{contact_of, gap_exceeding};
use crate::pairs::{FixedSide, Partner, for_each_candidate};

/// Moving-list slots per parallel task: large enough to amortise
/// scheduling, small enough to balance two to a few dozen threads.
pub(super) const CHUNK: usize = 1024;

/// Slots between two checks of whether another chunk ran out of memory.
const STOP_CHECK: usize = 64;

/// The narrow phase's buffers and the step's results.
#[derive(Clone, Debug, Default)]
pub(super) struct NarrowPhase<const D: usize> {
    /// One per chunk of the moving list's slots; never shrunk, so that a
    /// chunk's buffers keep their capacity for later steps.
    chunks: Vec<Chunk<D>>,
    /// The last step's chunks, whose contacts of frames at rest are this
    /// step's (`resting.rs`).
    resting: RestingContacts<D>,
    /// The last step's contacts, in the moving list's slot order.
    pub contacts: Vec<Contact<D>>,
    /// The last step's body pairs, sorted, each once; and the step's before.
    pub pairs: Vec<(BodyHandle, BodyHandle)>,
    previous: Vec<(BodyHandle, BodyHandle)>,
    /// Scratch of the body pairs' sort and its other buffer; room for one
    /// key a contact.
    pair_keys: Vec<u64>,
    key_scratch: Vec<u64>,
    /// Scratch: per slot, the generation of the body a contact names
    /// there (read from the contacts, so that naming the sorted pairs
    /// reads a dense array rather than the slots).
    generations: Vec<u32>,
    /// Body pairs that started or ended touching at the last step, sorted.
    pub events: Vec<ContactEvent>,
    /// Scratch of the events: the `Ended` ones, which sort after every
    /// `Started` one.
    ended: Vec<ContactEvent>,
    /// The broad phase's count of changes when the contacts were found:
    /// while it has not changed, they name the frames as stored.
    stepped_at: Option<u64>,
    /// Chunks holding the contacts of a step found but not yet taken
    /// ([`NarrowPhase::take_found`]).
    found: usize,
    /// True while `contacts` are the chunks' as [`NarrowPhase::take_found`]
    /// left them (not taken by `step_into`, nor refined by `exact_boxes`).
    pristine: bool,
    /// `Some(dt's bits)` while the last step can be given again as it is
    /// ([`NarrowPhase::can_repeat`]): it moved nothing (every displacement
    /// `+0.0`, no turn), no velocity was set since, and its chunks hold its
    /// contacts.
    repeatable: Option<u64>,
    /// True when the last step was a repeat, for tests.
    pub repeated: bool,
}

/// What the candidate pass asks of each pair: the world's settings, and
/// whether rejections are remembered (no body turns).
#[derive(Clone, Copy, Debug)]
pub(super) struct Narrowing {
    pub detail: ContactDetail,
    pub spin_tolerance: Option<f64>,
    pub coherent: bool,
}

impl Narrowing {
    /// The world's settings, with `spinning` bodies.
    pub fn new(config: &WorldConfig, spinning: bool) -> Self {
        // Temporal coherence only while no body turns: a turn moves a
        // body's points farther than its odometer (its translation) says.
        let coherent = config.detail != ContactDetail::Candidates && !spinning;
        Narrowing { detail: config.detail, spin_tolerance: config.spin_tolerance, coherent }
    }
}

impl<const D: usize> NarrowPhase<D> {
    /// True while the contacts name the frames as the broad phase stores
    /// them: from a step until a body is inserted, removed, re-posed or
    /// parked.
    pub fn is_current(&self, broad: &BroadPhase<D>) -> bool {
        self.stepped_at == Some(broad.edits())
    }

    /// The step is over: its contacts describe the broad phase as it is.
    /// `still`: the step moved nothing, and was of `dt` (its bits).
    pub fn stepped(&mut self, broad: &BroadPhase<D>, still: Option<u64>) {
        self.stepped_at = Some(broad.edits());
        self.repeatable = still;
    }

    /// True when a step of `dt` would find the last step's contacts again,
    /// bit for bit and in the same order: the last step moved nothing, its
    /// `dt` was this one (so every velocity, unchanged since, gives the
    /// same displacement `+0.0`), and no body was inserted, removed,
    /// re-posed or parked since. Nothing moved: nothing to do.
    pub fn can_repeat(&self, broad: &BroadPhase<D>, dt: f64) -> bool {
        self.repeatable == Some(dt.to_bits()) && self.is_current(broad)
    }

    /// A velocity was set: the next step's displacements are no longer
    /// known to be the last step's.
    pub fn motion_set(&mut self) {
        self.repeatable = None;
    }

    /// The fallible half of [`NarrowPhase::repeat`]: room for the contacts
    /// and body pairs it copies.
    pub fn prepare_repeat(&mut self) -> Result<(), WorldError> {
        let total: usize =
            if self.pristine { 0 } else { self.chunks[..self.found].iter().map(|c| c.contacts.len()).sum() };
        let bytes = total.saturating_mul(size_of::<Contact<D>>());
        let fits = room_for(&mut self.contacts, total) && room_for(&mut self.previous, self.pairs.len());
        if fits { Ok(()) } else { Err(WorldError::OutOfMemory { bytes }) }
    }

    /// Steps 4–6 of a step that moves nothing after one that moved nothing
    /// ([`NarrowPhase::can_repeat`]): the last step's contacts (copied back
    /// from its chunks if they were taken or refined) and body pairs, and
    /// no event. Room was reserved by [`NarrowPhase::prepare_repeat`].
    pub fn repeat(&mut self) {
        if !self.pristine {
            self.take_found();
        }
        self.repeated = true;
        self.previous.clone_from(&self.pairs);
        self.events.clear();
    }

    /// The contacts were handed to the caller (`step_into`) or changed in
    /// place (`exact_boxes`): a repeated step copies them again.
    pub fn contacts_touched(&mut self) {
        self.pristine = false;
    }

    /// Forgets the results (not the step they describe).
    pub fn clear(&mut self) {
        self.pristine = false;
        self.repeatable = None;
        self.contacts.clear();
        self.pairs.clear();
        self.previous.clear();
        self.events.clear();
        self.resting.reusable = false;
    }

    /// Steps 4–5: candidates and FMB, the contacts into the chunks'
    /// buffers, and room for them in the step's results; the last step's
    /// results stay until [`NarrowPhase::take_found`] (a step prepared can
    /// still be called off). The contact buffers grow fallibly: contacts
    /// that do not fit in memory (a scene where everything overlaps
    /// everything) are an error.
    pub fn find_contacts(
        &mut self,
        broad: &BroadPhase<D>,
        ctx: &StepContext<'_, D>,
        how: Narrowing,
        slot_count: usize,
    ) -> Result<(), WorldError> {
        // The chunks are written again: the last step's are lost.
        self.repeatable = None;
        self.repeated = false;
        let n = broad.candidate_entries();
        let count = n.div_ceil(CHUNK);
        // The last step's chunks become the resting contacts; this step
        // writes in the chunks of the step before.
        let resting = &mut self.resting;
        std::mem::swap(&mut self.chunks, &mut resting.chunks);
        resting.count = std::mem::replace(&mut self.found, 0);
        let rest = how.coherent && broad.apart.some_at_rest() && resting.index(broad.moving.len());
        let resting = rest.then_some(&*resting);
        let chunks = &mut self.chunks;
        if chunks.len() < count {
            if !room_for(chunks, count) {
                return Err(self.forget_found(count.saturating_mul(size_of::<Chunk<D>>())));
            }
            chunks.resize_with(count, Chunk::default);
        }
        // Set by the first chunk out of memory: the others stop early.
        let failed = AtomicBool::new(false);
        let run = |(c, chunk): (usize, &mut Chunk<D>)| {
            chunk.contacts.clear();
            chunk.keys.clear();
            chunk.reused = 0;
            let (start, end) = (c * CHUNK, n.min((c + 1) * CHUNK));
            for from in (start..end).step_by(STOP_CHECK) {
                if failed.load(Ordering::Relaxed) {
                    return false;
                }
                if !contacts_in(broad, ctx, how, resting, from..end.min(from + STOP_CHECK), chunk) {
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
        let fits = fits
            && room_for(&mut self.contacts, total)
            && room_for(&mut self.pair_keys, total)
            && room_for(&mut self.key_scratch, total)
            && room_for(&mut self.generations, slot_count)
            && self.reserve_events(total);
        if !fits {
            return Err(self.forget_found(bytes));
        }
        self.found = count;
        // Found with the pairs' memory: the frames at rest next step can
        // take them (not so the conservative answers of turning bodies).
        self.resting.reusable = how.coherent;
        Ok(())
    }

    /// What a step out of memory found is given back (the chunks' buffers,
    /// so that the next step starts small), and the last step's contacts
    /// are not offered for reuse: the error for `bytes`.
    fn forget_found(&mut self, bytes: usize) -> WorldError {
        for c in self.chunks.iter_mut() {
            (c.contacts, c.keys) = (Vec::new(), Vec::new());
        }
        self.resting.reusable = false;
        WorldError::OutOfMemory { bytes }
    }

    /// Room for [`NarrowPhase::update_events`] with `total` contacts: this
    /// step's body pairs go in the buffer of the step before last (the
    /// buffers swap), at most one `Started` a pair and one `Ended` a last
    /// step's pair. False when memory ran out.
    fn reserve_events(&mut self, total: usize) -> bool {
        let last = self.pairs.len();
        room_for(&mut self.previous, total)
            && room_for(&mut self.events, total.saturating_add(last))
            && room_for(&mut self.ended, last)
    }

    /// How many contacts the prepared step found (not yet taken).
    pub fn found_contacts(&self) -> usize {
        self.chunks[..self.found].iter().map(|c| c.contacts.len()).sum()
    }

    /// How many of the last step's contacts were taken from the step
    /// before (`resting.rs`).
    pub fn resting_contacts_used(&self) -> usize {
        self.chunks[..self.found].iter().map(|c| c.reused).sum()
    }

    /// Step 6a: the contacts [`NarrowPhase::find_contacts`] found become
    /// the step's, in deterministic order (room reserved: no allocation).
    pub fn take_found(&mut self) {
        self.contacts.clear();
        for c in &self.chunks[..self.found] {
            self.contacts.extend_from_slice(&c.contacts);
        }
        self.pristine = true;
    }

    /// Step 6b: body pairs of this step, and what started or ended (`slots`:
    /// the world's, for the bodies' generations and whether they live).
    /// Every buffer has room ([`NarrowPhase::reserve_events`]): no
    /// allocation, so the commit cannot fail on low memory.
    pub fn update_events(&mut self, slots: &[Slot<D>]) {
        std::mem::swap(&mut self.previous, &mut self.pairs);
        // Sorted as packed slot indices: a step's bodies are live, so their
        // slots name them, and the order is the handles' order. Packed
        // tight (the second index in as many bits as the slot count
        // needs), so that the radix sort has fewer bits to sort.
        self.pair_keys.clear();
        let shift = (usize::BITS - slots.len().leading_zeros()).min(32);
        // Every buffer has room (reserved with the contacts): no allocation.
        self.generations.resize(slots.len(), 0);
        for c in &self.contacts {
            let (a, b) = (c.a.body, c.b.body);
            self.pair_keys.push(u64::from(a.index) << shift | u64::from(b.index));
            (self.generations[a.index as usize], self.generations[b.index as usize]) = (a.generation, b.generation);
        }
        sort_keys(&mut self.pair_keys, &mut self.key_scratch);
        self.pair_keys.dedup();
        let generations = &self.generations;
        let handle = |slot: u64| BodyHandle { index: slot as u32, generation: generations[slot as usize] };
        self.pairs.clear();
        // A plain loop: a map this light costs more split among threads.
        self.pairs.extend(self.pair_keys.iter().map(|&k| (handle(k >> shift), handle(k & ((1 << shift) - 1)))));
        self.events.clear();
        self.ended.clear();
        // Bodies removed since the previous step get no `Ended` event.
        let live = |h: BodyHandle| super::live(slots, h);
        let (now, before) = (&self.pairs, &self.previous);
        let (mut i, mut j) = (0, 0);
        while i < now.len() && j < before.len() {
            // One comparison of the packed pairs, in the pairs' order.
            let (x, y) = (packed(now[i]), packed(before[j]));
            if x == y {
                (i, j) = (i + 1, j + 1);
            } else if x < y {
                self.events.push(ContactEvent::Started(now[i].0, now[i].1));
                i += 1;
            } else {
                let (x, y) = before[j];
                if live(x) && live(y) {
                    self.ended.push(ContactEvent::Ended(x, y));
                }
                j += 1;
            }
        }
        self.events.extend(now[i..].iter().map(|&(x, y)| ContactEvent::Started(x, y)));
        let ended = before[j..].iter().filter(|&&(x, y)| live(x) && live(y));
        self.ended.extend(ended.map(|&(x, y)| ContactEvent::Ended(x, y)));
        // Both lists are sorted (the merge walks sorted pairs), and every
        // `Started` sorts before every `Ended`: appending sorts them, unless
        // a restored snapshot's pairs came unsorted.
        self.events.extend_from_slice(&self.ended);
        if !self.events.is_sorted() {
            self.events.sort_unstable();
        }
    }
}

/// A body pair as one integer, in the pairs' order (a handle orders by
/// slot, then generation).
#[inline(always)]
fn packed((a, b): (BodyHandle, BodyHandle)) -> u128 {
    let h = |h: BodyHandle| u128::from(h.index) << 32 | u128::from(h.generation);
    h(a) << 64 | h(b)
}

/// The contacts of the candidate pairs of a range of the moving list's
/// slots, into the chunk's contacts; false when they did not fit in
/// memory (the contacts are then short).
fn contacts_in<const D: usize>(
    broad: &BroadPhase<D>,
    ctx: &StepContext<'_, D>,
    how: Narrowing,
    resting: Option<&RestingContacts<D>>,
    entries: std::ops::Range<usize>,
    chunk: &mut Chunk<D>,
) -> bool {
    if how.detail == ContactDetail::Candidates && ctx.spins.is_empty() {
        return candidates_in(broad, ctx, entries, chunk);
    }
    let (out, keys) = (&mut chunk.contacts, &mut chunk.keys);
    let mut fits = true;
    let (moving, fixed) = (&broad.moving, &broad.fixed);
    let shifts = ctx.shifts;
    let moved = |i: u32, m: &Meta| moving.frames[i as usize].moved(shifts[m.rank as usize]);
    let (detail, apart, coherent) = (how.detail, &broad.apart, how.coherent);
    // The narrow phase, unless the pair is remembered apart (`apart.rs`):
    // item `i` of body rank `rank`, its partner `key` of body rank
    // `other` (`None`: fixed). No odometer is read without a narrow phase.
    // The partner's frame (a moving one's is a copy) is made only for FMB.
    let (spins, tolerance) = (ctx.spins, how.spin_tolerance);
    let reused = std::cell::Cell::new(0);
    let partner_frame = |p: Partner| match p {
        Partner::Moving(j) => Partnered::Moving(moved(j, &moving.meta[j as usize])),
        Partner::Fixed(k) => Partnered::Fixed(&fixed.frames[k as usize]),
    };
    let narrow = |i: u32, rank: u32, key: u32, other: Option<u32>, f: &Frame<D>, partner: Partner| {
        // A spinning pair: conservative.
        if !spins.is_empty() {
            let spin = |r: u32| spins.get(r as usize).copied().flatten();
            let (sf, sg) = (spin(rank), other.and_then(spin));
            if sf.is_some() || sg.is_some() {
                return spinning_contact(detail, f, sf, &partner_frame(partner), sg, tolerance);
            }
        }
        if detail == ContactDetail::Candidates {
            // The swept boxes' overlap when other bodies turn
            // (`candidates_in` when none does): no partner frame to move.
            // From the frame: the pair set's boxes of turning bodies
            // are their turning boxes.
            let g = partner_box(broad, shifts, None, partner);
            return f.aabb().intersection(&g).map(|b| (b, [0.0, 1.0]));
        }
        if !coherent {
            return contact_of(detail, f, &partner_frame(partner));
        }
        // Two frames at rest: the last step's answer, if it was a contact.
        if let Some(c) = resting.filter(|_| apart.at_rest(rank, other)).and_then(|r| r.find(i, key)) {
            reused.set(reused.get() + 1);
            return Some((c.aabb, c.time));
        }
        let odo = apart.travelled(rank, other);
        if apart.is_apart(i, key, odo[1]) {
            return None;
        }
        let g = partner_frame(partner);
        let hit = contact_of(detail, f, &g);
        if hit.is_none() {
            remember_apart(apart, i, key, odo, f, &g);
        }
        hit
    };
    // The moving frame of the last slot's item, reused by its partners.
    let mut current: Option<(u32, &Meta, Frame<D>)> = None;
    let fixed_side = FixedSide { list: &broad.static_grid, near: &broad.near_fixed };
    let listed = for_each_candidate(broad.moving_side(), fixed_side, entries, &mut chunk.fixed, |item, partner| {
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
        let (other, key, rank) = match partner {
            Partner::Moving(j) => {
                let other = &moving.meta[j as usize];
                (other, moving_key(j), Some(other.rank))
            }
            Partner::Fixed(k) => (&fixed.meta[k as usize], fixed_key(k), None),
        };
        let hit = me.pairs_with(other).then(|| narrow(item, me.rank, key, rank, frame, partner));
        if let Some(Some((aabb, time))) = hit {
            fits &= push_contact(out, keys, me, other, aabb, time, u64::from(item) << 32 | u64::from(key));
        }
    });
    chunk.reused += reused.get();
    fits && listed
}

/// [`contacts_in`] in the [`ContactDetail::Candidates`] detail when no body
/// turns: each candidate's swept boxes (in `f64`, from the frames' boxes)
/// and their overlap, with no frame copied or moved.
fn candidates_in<const D: usize>(
    broad: &BroadPhase<D>,
    ctx: &StepContext<'_, D>,
    entries: std::ops::Range<usize>,
    chunk: &mut Chunk<D>,
) -> bool {
    let (out, keys) = (&mut chunk.contacts, &mut chunk.keys);
    let (moving, fixed, shifts) = (&broad.moving, &broad.fixed, ctx.shifts);
    let mut fits = true;
    // Made by the pair set's sweep when it gives the candidates.
    let stored = broad.swept_boxes();
    // The swept box of the last entry, reused by its partners.
    let mut current: Option<(u32, Aabb<D>)> = None;
    let fixed_side = FixedSide { list: &broad.static_grid, near: &broad.near_fixed };
    let listed = for_each_candidate(broad.moving_side(), fixed_side, entries, &mut chunk.fixed, |item, partner| {
        let me = &moving.meta[item as usize];
        let (other, key) = match partner {
            Partner::Moving(j) => (&moving.meta[j as usize], moving_key(j)),
            Partner::Fixed(k) => (&fixed.meta[k as usize], fixed_key(k)),
        };
        if !me.pairs_with(other) {
            return;
        }
        let g = partner_box(broad, shifts, stored, partner);
        let f = match current {
            Some((c, b)) if c == item => b,
            _ => current.insert((item, swept_box(broad, shifts, stored, item))).1,
        };
        if let Some(aabb) = f.intersection(&g) {
            fits &= push_contact(out, keys, me, other, aabb, [0.0, 1.0], u64::from(item) << 32 | u64::from(key));
        }
    });
    fits && listed
}

/// Moving frame `i`'s box swept by its body's displacement (`shifts`, by
/// rank): from `stored` (the pair set's sweep, which made them this step)
/// when given, else from its frame.
#[inline(always)]
fn swept_box<const D: usize>(
    broad: &BroadPhase<D>,
    shifts: &[[f64; D]],
    stored: Option<&[Aabb<D>]>,
    i: u32,
) -> Aabb<D> {
    match stored {
        Some(s) => s[i as usize],
        None => {
            let rank = broad.moving.meta[i as usize].rank;
            broad.moving.frames[i as usize].aabb().swept(&shifts[rank as usize])
        }
    }
}

/// A candidate partner's box over the step: a moving frame's swept
/// ([`swept_box`]), a fixed frame's as stored.
#[inline(always)]
fn partner_box<const D: usize>(
    broad: &BroadPhase<D>,
    shifts: &[[f64; D]],
    stored: Option<&[Aabb<D>]>,
    partner: Partner,
) -> Aabb<D> {
    match partner {
        Partner::Moving(j) => swept_box(broad, shifts, stored, j),
        Partner::Fixed(k) => broad.fixed.frames[k as usize].aabb(),
    }
}

/// Appends the contact of the frames of `me` and `other` and its pair key
/// (the entry and its partner's key), growing the buffers fallibly: false
/// when memory ran out.
#[inline(always)]
fn push_contact<const D: usize>(
    out: &mut Vec<Contact<D>>,
    keys: &mut Vec<u64>,
    me: &Meta,
    other: &Meta,
    aabb: Aabb<D>,
    time: [f64; 2],
    key: u64,
) -> bool {
    // The two ids in order (`FrameId`'s: slot first): the frames of a pair
    // are of two bodies (`Meta::pairs_with`), so their slots decide.
    debug_assert_ne!(me.slot, other.slot);
    let (first, second) = if other.slot < me.slot { (other, me) } else { (me, other) };
    let (a, b) = (first.id(), second.id());
    debug_assert!(a < b);
    if room_for_one(out) && room_for_one(keys) {
        out.push(Contact { a, b, aabb, time });
        keys.push(key);
        true
    } else {
        false
    }
}

/// A candidate's partner frame: a moving one moved by its body's
/// displacement (a copy), or a fixed one as stored.
enum Partnered<'a, const D: usize> {
    Moving(Frame<D>),
    Fixed(&'a Frame<D>),
}

impl<const D: usize> std::ops::Deref for Partnered<'_, D> {
    type Target = Frame<D>;

    #[inline(always)]
    fn deref(&self) -> &Frame<D> {
        match self {
            Partnered::Moving(f) => f,
            Partnered::Fixed(f) => f,
        }
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
