//! Near lists: for each moving frame, the fixed frames it may meet, kept
//! from step to step while the frame stays inside a fat box.
//!
//! A moving frame's fixed partners are the fixed list's slots whose boxes
//! overlap its swept box. Looking them up costs a box query on the fixed
//! list (up to 27 hashed cells of a list that may hold millions of boxes:
//! cache misses). Instead, each moving frame keeps a **fat box** (its swept
//! box grown by a margin when it was last looked up) and the few fixed
//! slots overlapping it. While the swept box stays inside the fat box, the
//! fixed slots overlapping the swept box are among those kept, so testing
//! the kept ones gives exactly the query's answer (Box2D's enlarged boxes,
//! applied to the one query a step makes per moving frame). A frame that
//! leaves its fat box is looked up again with a new one.
//!
//! A list depends on the fixed list only (its slots): it is dropped when
//! the fixed list changes. It does not depend on the moving frame it was
//! made for: it holds every fixed slot overlapping its fat box, so it is
//! right for any frame whose swept box lies inside. The lists are indexed
//! by the moving store's index; when the store is re-sorted, a list left
//! under another frame is used if that frame's swept box lies in its fat
//! box, and replaced otherwise. Partners always come out in the fixed
//! list's slot order, whether kept or queried, so the answer depends only
//! on the frames, never on the lists' history.

use super::cell_list::CellList;
use super::grid_box::GridBox;
use crate::aabb::Aabb;
use crate::fallible::{NoRoom, room, room_for, room_for_one};

/// Most fixed slots kept per moving frame; a frame whose fat box overlaps
/// more is "crowded" and queries the fixed list each step until it leaves
/// it. Far above what a fat box sized to the motion holds (a fast frame of
/// the mostly-static scene keeps a few dozen): only a large frame over a
/// dense fixed region reaches it.
const CAP: usize = 512;

/// `len` of a crowded entry.
const CROWDED: u32 = u32::MAX;

/// The fat box grows the swept box by this many times the frame's
/// displacement along each axis: a frame moving steadily keeps its list
/// for about this many steps, one at rest keeps it for good. Measured on
/// the mostly-static scene (1M fixed + 10k moving, candidates only): 2×
/// 9.2–10.0 ms, 4× 6.9–7.1, 8× 7.8–8.0, 16× 9.7–10.5; growing by a part
/// of the box's extent too (1/16 to 1/2) only crowded the lists.
const GROW_MOTION: f64 = 4.0;

/// Lists of at most this many entries are tested one box at a time.
const SHORT: usize = 3;

/// Moving frames per pool: the lists of frames `c·CHUNK..(c+1)·CHUNK` live
/// in pool `c`, so the refresh runs chunk by chunk in parallel.
const CHUNK: usize = 1024;

/// Lanes of the kept boxes' overlap test: chunks of this many boxes are
/// tested at once (the compiler vectorises the fixed-size loop).
const LANES: usize = 8;

/// One moving frame's fat box and where its fixed slots are in its
/// chunk's pool.
#[derive(Clone, Copy, Debug)]
struct Near<const D: usize> {
    min: [f32; D],
    max: [f32; D],
    /// First of the list's entries in the pool.
    start: u32,
    /// Number of entries, or [`CROWDED`].
    len: u32,
}

impl<const D: usize> Near<D> {
    /// No fat box (inverted: contains nothing), so the first use looks up.
    const STALE: Self = Near { min: [f32::INFINITY; D], max: [f32::NEG_INFINITY; D], start: 0, len: CROWDED };

    #[inline(always)]
    fn contains(&self, q: &GridBox<D>) -> bool {
        let (lo, hi) = (q.min_f32(), q.max_f32());
        (0..D).fold(true, |c, k| c & (self.min[k] <= lo[k]) & (hi[k] <= self.max[k]))
    }
}

/// The kept lists of one chunk of moving frames, one after another: each
/// fixed slot with a copy of its box, structure of arrays (a list's boxes
/// are read contiguously, several at a time, instead of gathered from the
/// fixed list). A list looked up again is appended; the pool is compacted
/// when dead entries outnumber the live ones, so it stays within about
/// twice what the lists hold, and its buffers are reused from step to step.
#[derive(Clone, Debug, Default)]
struct Pool<const D: usize> {
    slots: Vec<u32>,
    min: Vec<[f32; LANES]>,
    max: Vec<[f32; LANES]>,
    /// Entries in the pool.
    len: usize,
    /// Entries held by live lists.
    live: usize,
}

/// Axis `k` of entry `e` in a lane-blocked array: block `e / LANES` holds
/// `D` rows of `LANES` values, one per axis.
#[inline(always)]
fn at<const D: usize>(e: usize, k: usize) -> (usize, usize) {
    ((e / LANES) * D + k, e % LANES)
}

impl<const D: usize> Pool<D> {
    fn clear(&mut self) {
        self.slots.clear();
        self.min.clear();
        self.max.clear();
        (self.len, self.live) = (0, 0);
    }

    /// Opens a block, filled with boxes that meet nothing (inverted), in
    /// room the caller reserved ([`Pool::room_for_boxes`], or a compaction's
    /// spare as large as the pool): no allocation.
    #[inline(always)]
    fn new_block(&mut self) {
        let n = self.min.len();
        debug_assert!(n + D <= self.min.capacity() && n + D <= self.max.capacity());
        self.min.resize(n + D, [f32::INFINITY; LANES]);
        self.max.resize(n + D, [f32::NEG_INFINITY; LANES]);
    }

    /// Room for the blocks of `boxes` more entries. A pool that outgrows
    /// its buffers at least doubles them: its size depends on when its
    /// lists were looked up, so a step that replays earlier ones may need
    /// a little more than they did, and must not allocate. False when
    /// memory ran out.
    fn room_for_boxes(&mut self, boxes: usize) -> bool {
        let blocks = (self.len + boxes).div_ceil(LANES) * D;
        room_for(&mut self.min, blocks) && room_for(&mut self.max, blocks)
    }

    /// Appends a slot whose box [`Pool::box_at`] fills in later, tripling
    /// the buffer when full (for the same reason as
    /// [`Pool::room_for_boxes`]); false when memory ran out.
    #[inline(always)]
    fn push_slot(&mut self, p: u32) -> bool {
        if self.slots.len() == self.slots.capacity() && self.slots.try_reserve(2 * self.slots.len() + LANES).is_err() {
            return false;
        }
        self.slots.push(p);
        true
    }

    /// Fills in the box of entry `x` (the next one), whose slot is in.
    #[inline(always)]
    fn box_at(&mut self, fixed: &CellList<D>, x: usize) {
        debug_assert_eq!(x, self.len);
        if x.is_multiple_of(LANES) {
            self.new_block();
        }
        let b = fixed.grid_box(self.slots[x] as usize);
        let (lo, hi) = (b.min_f32(), b.max_f32());
        for k in 0..D {
            let (r, l) = at::<D>(x, k);
            self.min[r][l] = lo[k];
            self.max[r][l] = hi[k];
        }
        self.len += 1;
    }

    /// Entry `e` copied from `from` to the end.
    #[inline(always)]
    fn push_from(&mut self, from: &Self, e: usize) {
        let n = self.len;
        if n.is_multiple_of(LANES) {
            self.new_block();
        }
        for k in 0..D {
            let ((r, l), (s, m)) = (at::<D>(n, k), at::<D>(e, k));
            self.min[r][l] = from.min[s][m];
            self.max[r][l] = from.max[s][m];
        }
        // The spare has the pool's room (`compact`): no allocation.
        self.slots.push(from.slots[e]);
        self.len += 1;
    }

    /// Calls `f(slot)` for each entry of `start..start + len` whose box
    /// overlaps `q`, in order: `LANES` boxes at a time, each block's
    /// overlaps gathered into a bit mask first.
    #[inline(always)]
    fn for_each_overlapping(&self, start: usize, len: usize, q: &GridBox<D>, mut f: impl FnMut(usize)) {
        let (qmin, qmax) = (q.min_f32(), q.max_f32());
        let end = start + len;
        if len <= SHORT {
            // A slow frame's few partners: one box at a time.
            for x in start..end {
                let (b, l) = (x / LANES * D, x % LANES);
                let hit =
                    (0..D).fold(true, |h, k| h & (self.min[b + k][l] <= qmax[k]) & (qmin[k] <= self.max[b + k][l]));
                if hit {
                    f(self.slots[x] as usize);
                }
            }
            return;
        }
        let mut e = start;
        while e < end {
            let (block, first) = (e / LANES, e % LANES);
            let rows = block * D;
            let mut hit = [true; LANES];
            for k in 0..D {
                let (lo, hi) = (&self.min[rows + k], &self.max[rows + k]);
                for j in 0..LANES {
                    hit[j] &= (lo[j] <= qmax[k]) & (qmin[k] <= hi[j]);
                }
            }
            let mut mask = hit.iter().enumerate().fold(0u32, |m, (j, &h)| m | u32::from(h) << j);
            // Only the list's own lanes of this block.
            let last = (end - block * LANES).min(LANES);
            mask &= ((1u32 << last) - 1) & !((1u32 << first) - 1);
            while mask != 0 {
                let j = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                f(self.slots[block * LANES + j] as usize);
            }
            e = (block + 1) * LANES;
        }
    }
}

/// Per moving frame (by store index), the fixed slots near it.
#[derive(Clone, Debug, Default)]
pub(crate) struct NearLists<const D: usize> {
    entries: Vec<Near<D>>,
    pools: Vec<Pool<D>>,
    /// Compaction scratch, one per pool (swapped with it).
    spare: Vec<Pool<D>>,
}

/// What [`NearLists::refresh`] needs of moving frame `i`: its swept box
/// and displacement, or `None` when it should query the fixed list every
/// step (frames the caller handles otherwise).
pub(crate) type Moving<const D: usize> = Option<(Aabb<D>, [f64; D])>;

impl<const D: usize> NearLists<D> {
    /// Forgets every list: the moving store or the fixed list changed.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.pools.iter_mut().for_each(Pool::clear);
    }

    /// Brings the lists of `n` moving frames up to date for this step's
    /// swept boxes: a frame whose swept box left its fat box (or that has
    /// none) gets a new fat box and its fixed slots, by one query. Runs in
    /// parallel with the `parallel` feature (a chunk of frames per task);
    /// allocates only when `n` changed or a pool outgrows its buffers.
    ///
    /// # Errors
    /// [`NoRoom`] for the lists' tables (a frame's list that does not fit
    /// is crowded, not an error), the lists unchanged.
    pub fn refresh(
        &mut self,
        fixed: &CellList<D>,
        n: usize,
        frame: impl Fn(usize) -> Moving<D> + Sync,
    ) -> Result<(), NoRoom> {
        let chunks = n.div_ceil(CHUNK);
        room(&mut self.entries, n)?;
        room(&mut self.pools, chunks)?;
        room(&mut self.spare, chunks)?;
        if self.entries.len() != n {
            self.entries.clear();
            self.entries.resize(n, Near::STALE);
            self.pools.iter_mut().for_each(Pool::clear);
        }
        self.pools.resize_with(chunks, Pool::default);
        self.spare.resize_with(chunks, Pool::default);
        let update = |(c, ((entries, pool), spare)): (usize, ((&mut [Near<D>], &mut Pool<D>), &mut Pool<D>))| {
            for (j, e) in entries.iter_mut().enumerate() {
                match frame(c * CHUNK + j) {
                    None => {
                        if e.len != CROWDED {
                            pool.live -= e.len as usize;
                        }
                        *e = Near::STALE;
                    }
                    Some((swept, d)) => {
                        if !e.contains(&GridBox::new(&swept)) {
                            if e.len != CROWDED {
                                pool.live -= e.len as usize;
                            }
                            *e = look_up(fixed, pool, &swept, &d);
                        }
                    }
                }
            }
            if pool.len > 2 * pool.live + 4 * LANES {
                compact(entries, pool, spare);
            }
        };
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            self.entries
                .par_chunks_mut(CHUNK)
                .zip(self.pools.par_iter_mut())
                .zip(self.spare.par_iter_mut())
                .enumerate()
                .for_each(update);
        }
        #[cfg(not(feature = "parallel"))]
        self.entries
            .chunks_mut(CHUNK)
            .zip(self.pools.iter_mut())
            .zip(self.spare.iter_mut())
            .enumerate()
            .for_each(update);
        Ok(())
    }

    /// Calls `f(p)` for each slot `p` of `fixed` whose box overlaps `q`,
    /// the swept box of moving frame `i` this step, in slot order: from
    /// `i`'s list after [`NearLists::refresh`], else by a query (sorted in
    /// `scratch`, which grows fallibly: false, with no call, when the
    /// query's slots did not fit in memory).
    #[inline]
    #[must_use]
    pub fn for_each(
        &self,
        fixed: &CellList<D>,
        i: usize,
        q: &GridBox<D>,
        scratch: &mut Vec<u32>,
        mut f: impl FnMut(usize),
    ) -> bool {
        match self.entries.get(i) {
            Some(e) if e.len != CROWDED && e.contains(q) => {
                self.pools[i / CHUNK].for_each_overlapping(e.start as usize, e.len as usize, q, f);
            }
            _ => {
                scratch.clear();
                let mut fits = true;
                fixed.query_slots(q, |p| {
                    fits = fits && room_for_one(scratch);
                    if fits {
                        // Slots fit `u32` (`MAX_ITEMS`).
                        scratch.push(p as u32);
                    }
                });
                if !fits {
                    return false;
                }
                scratch.sort_unstable();
                for &p in scratch.iter() {
                    f(p as usize);
                }
            }
        }
        true
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        let pool = |p: &Pool<D>| p.slots.capacity() * 4 + (p.min.capacity() + p.max.capacity()) * 4 * LANES;
        self.entries.capacity() * size_of::<Near<D>>() + self.pools.iter().chain(&self.spare).map(pool).sum::<usize>()
    }
}

/// Rewrites `pool` with its live lists only, in entry order (through
/// `spare`, which it swaps with).
fn compact<const D: usize>(entries: &mut [Near<D>], pool: &mut Pool<D>, spare: &mut Pool<D>) {
    spare.clear();
    // The spare becomes the pool: room for all the pool had, so that the
    // pools' capacities never shrink by the swap (a later step that
    // replays an earlier one must not allocate).
    // Low memory leaves the pool as it is, its dead lists included.
    let fits = spare.slots.try_reserve(pool.slots.capacity()).is_ok()
        && spare.min.try_reserve(pool.min.capacity()).is_ok()
        && spare.max.try_reserve(pool.max.capacity()).is_ok();
    if !fits {
        return;
    }
    for e in entries.iter_mut().filter(|e| e.len != CROWDED) {
        let start = spare.len;
        for x in e.start as usize..(e.start + e.len) as usize {
            spare.push_from(pool, x);
        }
        // Pools hold fewer than `CHUNK · CAP` entries: they fit `u32`.
        e.start = start as u32;
    }
    spare.live = spare.len;
    std::mem::swap(pool, spare);
}

/// A new fat box around `swept` (displacement `d`) and the fixed slots it
/// overlaps, sorted, appended to `pool`; crowded when they are more than
/// [`CAP`] or do not fit in memory.
fn look_up<const D: usize>(fixed: &CellList<D>, pool: &mut Pool<D>, swept: &Aabb<D>, d: &[f64; D]) -> Near<D> {
    let fat = Aabb {
        min: std::array::from_fn(|k| swept.min[k] - GROW_MOTION * d[k].abs()),
        max: std::array::from_fn(|k| swept.max[k] + GROW_MOTION * d[k].abs()),
    };
    let fat = GridBox::new(&fat);
    // The slots go to the pool's end, sorted there, then their boxes.
    let from = pool.slots.len();
    let (mut len, mut fits) = (0usize, true);
    fixed.query_slots(&fat, |p| {
        if len < CAP {
            fits = fits && pool.push_slot(p as u32);
        }
        len += 1;
    });
    let mut e = Near { min: fat.min_f32(), max: fat.max_f32(), start: pool.len as u32, len: CROWDED };
    // A list that does not fit in memory is crowded too: its frame
    // queries the grid, as for a list longer than `CAP`.
    if len <= CAP && fits && pool.room_for_boxes(len) {
        pool.slots[from..].sort_unstable();
        for x in from..from + len {
            pool.box_at(fixed, x);
        }
        e.len = len as u32;
        pool.live += len;
    } else {
        pool.slots.truncate(from);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{CellSize, random_boxes};
    use rand::{Rng, SeedableRng};

    /// The slots a direct query finds, sorted.
    fn direct(fixed: &CellList<3>, q: &GridBox<3>) -> Vec<usize> {
        let mut got = Vec::new();
        fixed.query_slots(q, |p| got.push(p));
        got.sort_unstable();
        got
    }

    /// Boxes of extent 0.2 to 2 in a cube of side 40.
    fn small_boxes(n: usize, seed: u64) -> Vec<Aabb<3>> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let c: [f64; 3] = std::array::from_fn(|_| rng.random_range(-20.0..20.0));
                let e: [f64; 3] = std::array::from_fn(|_| rng.random_range(0.2..2.0));
                Aabb { min: c, max: std::array::from_fn(|k| c[k] + e[k]) }
            })
            .collect()
    }

    #[test]
    fn kept_lists_answer_as_a_query_does_while_frames_drift() {
        let fixed_boxes = small_boxes(3000, 7);
        let mut fixed = CellList::default();
        fixed.build(CellSize::new(1.0), fixed_boxes.len(), |k| (fixed_boxes[k], k as u32), None).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        // Moving boxes, each with its own velocity; some teleport at times.
        // Two chunks' worth, so that pools are split and compacted; frame 0
        // huge, so that its fat box is crowded.
        let mut boxes = small_boxes(1300, 8);
        boxes[0] = Aabb { min: [-60.0; 3], max: [60.0; 3] };
        let velocity: Vec<[f64; 3]> =
            (0..boxes.len()).map(|_| std::array::from_fn(|_| rng.random_range(-0.3..0.3))).collect();
        let mut near = NearLists::default();
        let (mut kept, mut scratch) = (0, Vec::new());
        for step in 0..40 {
            let swept: Vec<Aabb<3>> = boxes.iter().zip(&velocity).map(|(b, v)| b.swept(v)).collect();
            // Every seventh frame is handled "otherwise" on odd steps.
            let frame = |i: usize| (step % 2 == 0 || !i.is_multiple_of(7)).then(|| (swept[i], velocity[i]));
            // Every fifth step without a refresh: lists left behind by
            // their frames must not be used.
            if step % 5 != 4 {
                near.refresh(&fixed, boxes.len(), frame).unwrap();
            }
            for (i, s) in swept.iter().enumerate() {
                let q = GridBox::new(s);
                let mut got = Vec::new();
                assert!(near.for_each(&fixed, i, &q, &mut scratch, |p| got.push(p)));
                assert_eq!(got, direct(&fixed, &q), "step {step}, frame {i}");
                kept += usize::from(near.entries[i].len != CROWDED);
            }
            for (i, b) in boxes.iter_mut().enumerate() {
                let jump = if rng.random_bool(0.02) { 5.0 } else { 0.0 };
                *b = Aabb {
                    min: std::array::from_fn(|k| b.min[k] + velocity[i][k] + jump),
                    max: std::array::from_fn(|k| b.max[k] + velocity[i][k] + jump),
                };
            }
        }
        // The lists were used, not only the fallback; the pools stay small.
        assert!(kept > 1300 * 40 / 2, "{kept}");
        assert_eq!(near.entries[0].len, CROWDED, "a huge frame crowds its list: {:?}", near.entries[0]);
        for pool in &near.pools {
            assert!(pool.len <= 2 * pool.live + 4 * LANES + CAP, "{} {}", pool.len, pool.live);
        }
    }

    #[test]
    fn a_frame_without_a_list_queries() {
        let fixed_boxes = random_boxes(100, 1, 5.0);
        let mut fixed = CellList::default();
        fixed.build(CellSize::new(1.0), fixed_boxes.len(), |k| (fixed_boxes[k], k as u32), None).unwrap();
        let near = NearLists::<3>::default();
        let q = GridBox::new(&Aabb { min: [-1.0; 3], max: [1.0; 3] });
        let mut got = Vec::new();
        assert!(near.for_each(&fixed, 5, &q, &mut Vec::new(), |p| got.push(p)));
        assert_eq!(got, direct(&fixed, &q));
        assert!(!got.is_empty());
    }
}
