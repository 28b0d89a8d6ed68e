//! The pair set: the moving frames' candidate pairs kept from step to step
//! through fat boxes, for worlds without large bodies (`broad_phase.rs`).
//!
//! Each moving frame has a fat box: its swept box swept on by four more
//! steps at the same displacement (so that a steady mover does not leave it
//! every step), grown by an eighth of its extent. In the persistent mode
//! the set holds every pair of moving frames of different bodies whose fat
//! boxes overlap, sorted. A step sweeps each frame's box and compares it
//! with its fat box; the frames whose swept box left theirs (the move
//! buffer) get a new fat box, move in the persistent grid
//! (`grid/fat_grid.rs`) when their cells change, drop their pairs and look
//! up their new ones in the grid. The pairs of two frames that stayed in
//! their fat boxes are still those of the same two fat boxes: kept as they
//! are. Nothing moved: nothing done (Box2D's move buffer and pair set,
//! rapier's fat leaves, waLBerla's `pe` hash grids).
//!
//! Where most frames leave their fat boxes every step (fast movers), a
//! look-up each costs more than a cell list of the swept boxes rebuilt and
//! passed over (`grid/cell_list.rs`): the set then holds this step's pairs
//! of overlapping swept boxes, found that way (the rebuild mode), and keeps
//! the fat boxes up to date, to see when few frames leave them again.
//!
//! A step's moving candidates are the set's pairs whose swept boxes overlap
//! (every pair of overlapping swept boxes is in the set, since each swept
//! box is inside its fat box). Frame `a` gives its pairs with the frames
//! after it in the store, in store order: the order depends on the store
//! and the frames only, never on the fat boxes or the mode, so the same
//! frames give the same candidates in the same order whatever the set's
//! history (a restored world, which starts with none, goes on bit for bit).

#[cfg(feature = "parallel")]
use rayon::prelude::*;

use super::context::StepContext;
use super::radix_sort::sort_keys;
use super::spin::frame_box;
use super::store::{Meta, Store};
use crate::aabb::Aabb;
use crate::fallible::{NoRoom, refill, room, room_for_one};
use crate::frame::Frame;
use crate::grid::{CellList, CellSize, FatGrid, GridBox, Spreads};
use crate::pairs::SetSide;

/// A fat box's margin per side, as a fraction of the swept box's extent
/// along that axis.
const MARGIN_EXTENT: f64 = 0.125;

/// How many steps ahead a fat box reaches at the frame's displacement: a
/// frame moving steadily stays in its fat box that many steps at least.
/// Measured on `uniform` and `uniform-fast` at 100k (callgrind, fat boxes of
/// 1/8 and 1/16 of the extent, 4 and 8 steps ahead): within 5% of each other.
const MARGIN_STEPS: f64 = 4.0;

/// The persistent mode is taken when at most this share of the frames
/// leave their fat boxes a step (the decaying peak, `PairSet::leaving`),
/// and left when more than [`STAY_PERSISTENT`] leave in one step: a
/// look-up in the grid costs about what two to ten frames cost in a
/// rebuild (more for fast frames, whose long fat boxes go to coarse cells),
/// and going persistent costs about two rebuilds.
const GO_PERSISTENT: f64 = 0.125;
const STAY_PERSISTENT: f64 = 0.25;

/// How much of the peak share of frames leaving their fat boxes is left a
/// step later.
const LEAVING_DECAY: f64 = 0.75;

/// Frames per parallel task.
#[cfg(feature = "parallel")]
const CHUNK: usize = 2048;

/// The fat box of swept box `s` (rounded), for a frame displaced by `d`
/// this step: the box swept on over the next steps at the same
/// displacement, grown by a fraction of its extent.
fn fat_box<const D: usize>(s: &GridBox<D>, d: &[f64; D]) -> GridBox<D> {
    let (lo, hi) = (s.min(), s.max());
    let ahead = |k: usize| d[k] * MARGIN_STEPS;
    let margin = |k: usize| (hi[k] - lo[k]) * MARGIN_EXTENT;
    GridBox::new(&Aabb {
        min: std::array::from_fn(|k| lo[k] + ahead(k).min(0.0) - margin(k)),
        max: std::array::from_fn(|k| hi[k] + ahead(k).max(0.0) + margin(k)),
    })
}

/// The moving frames' fat boxes, their grid, and the pairs of overlapping
/// fat boxes.
#[derive(Clone, Debug, Default)]
pub(super) struct PairSet<const D: usize> {
    /// Per moving frame (store index), as the grid rounds them: its box
    /// swept over this step, and its fat box (which contains it).
    /// (Each box's corners side by side: one cache line where a partner's
    /// box is read.)
    rounded: Vec<GridBox<D>>,
    /// Per moving frame, its swept box as computed (`f64`, not rounded):
    /// what a candidate's box is made of.
    swept: Vec<Aabb<D>>,
    fat: Vec<GridBox<D>>,
    /// The fat boxes' grid, while `persistent`.
    grid: FatGrid<D>,
    /// The pairs, as `a << 32 | b` with `a < b` store indices, sorted: while
    /// `persistent`, every pair of frames of different bodies whose fat
    /// boxes overlap; else those whose swept boxes overlap this step.
    pairs: Vec<u64>,
    /// True while the boxes describe the moving store (its indices have not
    /// changed since the last update).
    valid: bool,
    /// True when the grid and the pairs are the fat boxes' (the persistent
    /// mode); false when the pairs were found afresh by a cell list of this
    /// step's swept boxes (the rebuild mode, where most frames leave their
    /// fat boxes every step).
    persistent: bool,
    /// The largest share of frames that left their fat boxes in a step,
    /// decaying by [`LEAVING_DECAY`] a step (kept when the boxes are reset;
    /// zero at first: a new set tries the persistent mode): what decides
    /// the mode. Frames moving alike leave their fat boxes together, in
    /// waves a few steps apart: the decay spans the waves.
    leaving: f64,
    /// True when the last update kept pairs from the step before.
    kept: bool,
    /// The cell list of a rebuild, reused.
    list: CellList<D>,
    /// Frame `a`'s pairs are `pairs[starts[a]..starts[a + 1]]`.
    starts: Vec<u32>,
    /// This step's move buffer: the frames whose swept box left their fat
    /// box (every frame after a reset), and a flag each.
    moved: Vec<u32>,
    left: Vec<bool>,
    /// The moved frames' new pairs; the merge's and the sort's buffers.
    found: Vec<u64>,
    merged: Vec<u64>,
    scratch: Vec<u64>,
    /// Per chunk of the move buffer, its pairs found (parallel look-ups).
    #[cfg(feature = "parallel")]
    chunk_found: Vec<Vec<u64>>,
}

impl<const D: usize> PairSet<D> {
    /// Forgets the pairs and the fat boxes (the store's indices changed, or
    /// the cell size): the next update starts afresh.
    pub fn forget(&mut self) {
        self.valid = false;
        self.persistent = false;
    }

    /// True while the set describes the moving store (from an update to
    /// the next change of store indices).
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Whether the last update kept pairs from the step before.
    pub fn kept(&self) -> bool {
        self.kept
    }

    /// Brings the set up to date with this step's swept boxes of the frames
    /// of `moving` (displacements and turns in `ctx`), on cells of `cell`;
    /// `grouped`: some body has several frames (they never pair).
    ///
    /// Each frame's swept box is compared with its fat box, and the frames
    /// that left theirs get a new one. Then, while few frames leave their
    /// fat boxes, those few move in the grid and look up their pairs (the
    /// persistent mode); while many do (fast movers), a cell list of the
    /// swept boxes is built and its pass run, as a grid rebuilt every step
    /// would (the rebuild mode); the fat boxes are kept up to date in both,
    /// so that the share of frames leaving them is known. The answer is the
    /// same in both modes, in the same order.
    ///
    /// # Errors
    /// [`NoRoom`] when memory ran out: the set is then forgotten (the next
    /// update starts afresh).
    pub fn update(
        &mut self,
        moving: &Store<D>,
        cell: CellSize,
        ctx: &StepContext<'_, D>,
        grouped: bool,
    ) -> Result<(), NoRoom> {
        let updated = self.try_update(moving, cell, ctx, grouped);
        if updated.is_err() {
            self.forget();
        }
        updated
    }

    /// [`PairSet::update`], leaving the set half updated on an error.
    fn try_update(
        &mut self,
        moving: &Store<D>,
        cell: CellSize,
        ctx: &StepContext<'_, D>,
        grouped: bool,
    ) -> Result<(), NoRoom> {
        let n = moving.len();
        let reset = !self.valid || self.rounded.len() != n || self.list.cell_size() != cell;
        if reset {
            self.reset(n, cell)?;
        }
        // From here the boxes change: on an error the set is forgotten.
        room(&mut self.left, n)?;
        self.sweep(moving, ctx);
        self.list_moved()?;
        let share = if n == 0 { 0.0 } else { self.moved.len() as f64 / n as f64 };
        if !reset {
            // After a reset every frame leaves its empty fat box: no measure.
            self.leaving = share.max(LEAVING_DECAY * self.leaving);
        }
        self.kept = self.persistent && share <= STAY_PERSISTENT;
        if self.kept && self.moved.is_empty() {
            // Every frame stayed in its fat box: the pairs and their index
            // stand as they are.
            return Ok(());
        }
        if self.kept {
            for &i in &self.moved {
                self.grid.place(i, &self.fat_box(i as usize))?;
            }
            self.grid.keep_headroom();
            self.look_up_moved(moving)?;
            self.merge_found()?;
        } else if self.leaving <= GO_PERSISTENT {
            self.persistent = false;
            self.pairs_by_list(moving, cell, grouped, true)?;
            self.grid.reset(cell, n)?;
            for i in 0..n {
                self.grid.place(i as u32, &self.fat_box(i))?;
            }
            self.grid.keep_headroom();
            self.persistent = true;
        } else {
            self.persistent = false;
            self.pairs_by_list(moving, cell, grouped, false)?;
        }
        self.index_pairs(n)?;
        self.valid = true;
        Ok(())
    }

    /// Forgets every box, for `n` frames on cells of `cell`: every frame
    /// leaves its (empty) fat box at the next sweep.
    fn reset(&mut self, n: usize, cell: CellSize) -> Result<(), NoRoom> {
        self.persistent = false;
        for v in [&mut self.rounded, &mut self.fat] {
            refill(v, n, GridBox::EMPTY)?;
        }
        refill(&mut self.swept, n, Aabb::EMPTY)?;
        // A list of the cell size, so that a change of it is seen.
        self.list.build(cell, 0, |_| (Aabb::EMPTY, 0), None)
    }

    /// Every pair of overlapping fat boxes (`fat`) or swept boxes, of
    /// different bodies, by a cell list's pass.
    fn pairs_by_list(&mut self, moving: &Store<D>, cell: CellSize, grouped: bool, fat: bool) -> Result<(), NoRoom> {
        let boxes = if fat { &self.fat } else { &self.rounded };
        // `f32` corners are `f64` exactly: the list rounds them to themselves.
        let item = |i: usize| (Aabb { min: boxes[i].min(), max: boxes[i].max() }, i as u32);
        let rank = |i: usize| moving.meta[i].rank;
        let group: Option<&dyn Fn(usize) -> u32> = if grouped { Some(&rank) } else { None };
        self.list.build(cell, boxes.len(), item, group)?;
        self.pairs.clear();
        let (list, pairs) = (&self.list, &mut self.pairs);
        let mut spreads = Spreads::default();
        let mut fits = true;
        for p in 0..list.len() {
            let a = list.item(p);
            list.partners(p, &mut spreads, |q| {
                let b = list.item(q);
                if room_for_one(pairs) {
                    pairs.push(u64::from(a.min(b)) << 32 | u64::from(a.max(b)));
                } else {
                    fits = false;
                }
            });
        }
        if !fits {
            return Err(NoRoom { bytes: 2 * 8 * self.pairs.len() });
        }
        room(&mut self.scratch, self.pairs.len())?;
        sort_keys(&mut self.pairs, &mut self.scratch);
        Ok(())
    }

    /// Each frame's swept box; the frames whose swept box left their fat
    /// box get a new one, and their flag in `left`.
    #[inline(never)]
    fn sweep(&mut self, moving: &Store<D>, ctx: &StepContext<'_, D>) {
        self.left.clear();
        self.left.resize(moving.len(), false);
        // In chunks, each a plain loop over its slices (a zip of seven
        // parallel iterators cost about 50 instructions a frame).
        #[cfg(feature = "parallel")]
        self.rounded
            .par_chunks_mut(CHUNK)
            .zip(self.swept.par_chunks_mut(CHUNK))
            .zip(self.fat.par_chunks_mut(CHUNK))
            .zip(self.left.par_chunks_mut(CHUNK))
            .zip(moving.frames.par_chunks(CHUNK).zip(moving.meta.par_chunks(CHUNK)))
            .for_each(|((((rounded, swept), fat), left), (frames, meta))| {
                sweep_run(ctx, Sweep { rounded, swept, fat, left }, frames, meta);
            });
        #[cfg(not(feature = "parallel"))]
        sweep_run(
            ctx,
            Sweep { rounded: &mut self.rounded, swept: &mut self.swept, fat: &mut self.fat, left: &mut self.left },
            &moving.frames,
            &moving.meta,
        );
    }

    /// Frame `i`'s fat box.
    #[inline(always)]
    fn fat_box(&self, i: usize) -> GridBox<D> {
        self.fat[i]
    }

    /// The move buffer, in store order.
    #[inline(never)]
    fn list_moved(&mut self) -> Result<(), NoRoom> {
        self.moved.clear();
        for i in self.left.iter().enumerate().filter(|(_, l)| **l).map(|(i, _)| i as u32) {
            if !room_for_one(&mut self.moved) {
                return Err(NoRoom { bytes: 2 * self.moved.len() * 4 });
            }
            self.moved.push(i);
        }
        headroom(&mut self.moved);
        Ok(())
    }

    /// The moved frames' pairs: each moved frame's fat box against the
    /// grid's, a pair of two moved frames from the lower one's look-up.
    #[inline(never)]
    fn look_up_moved(&mut self, moving: &Store<D>) -> Result<(), NoRoom> {
        let (fat, grid, left, meta) = (&self.fat, &self.grid, &self.left, &moving.meta);
        // False once a pair did not fit.
        let look_up = |c: u32, out: &mut Vec<u64>| {
            let (i, rank) = (c as usize, meta[c as usize].rank);
            let mut fits = true;
            grid.query(&fat[i], fat, |j| {
                let k = j as usize;
                let mine = j == c || (left[k] && j < c) || meta[k].rank == rank;
                if mine {
                    return;
                }
                if room_for_one(out) {
                    out.push(u64::from(c.min(j)) << 32 | u64::from(c.max(j)));
                } else {
                    fits = false;
                }
            });
            fits
        };
        self.found.clear();
        #[cfg(feature = "parallel")]
        let fits = {
            let chunks = self.moved.len().div_ceil(CHUNK);
            room(&mut self.chunk_found, chunks)?;
            if self.chunk_found.len() < chunks {
                self.chunk_found.resize_with(chunks, Vec::new);
            }
            let fits = (self.chunk_found[..chunks].par_iter_mut().zip(self.moved.par_chunks(CHUNK)))
                .map(|(out, moved)| {
                    out.clear();
                    let fits = moved.iter().all(|&c| look_up(c, out));
                    headroom(out);
                    fits
                })
                .reduce(|| true, |a, b| a && b);
            let total = self.chunk_found[..chunks].iter().map(Vec::len).sum();
            fits && room(&mut self.found, total).is_ok() && {
                for out in &self.chunk_found[..chunks] {
                    self.found.extend_from_slice(out);
                }
                true
            }
        };
        #[cfg(not(feature = "parallel"))]
        let fits = self.moved.iter().all(|&c| look_up(c, &mut self.found));
        if !fits {
            return Err(NoRoom { bytes: 2 * 8 * self.found.len() });
        }
        headroom(&mut self.found);
        Ok(())
    }

    /// The kept pairs of two frames that stayed in their fat boxes, and the
    /// moved frames' new ones, sorted.
    #[inline(never)]
    fn merge_found(&mut self) -> Result<(), NoRoom> {
        // The buffers' sizes depend on the fat boxes' history: room to spare
        // keeps a later step of about the same size from allocating.
        room(&mut self.scratch, self.found.len())?;
        room(&mut self.merged, self.pairs.len() + self.found.len())?;
        headroom(&mut self.scratch);
        sort_keys(&mut self.found, &mut self.scratch);
        merge_kept(&self.pairs, &self.left, &self.found, &mut self.merged);
        headroom(&mut self.merged);
        std::mem::swap(&mut self.pairs, &mut self.merged);
        Ok(())
    }

    /// `starts` from the sorted pairs, for `n` frames.
    #[inline(never)]
    fn index_pairs(&mut self, n: usize) -> Result<(), NoRoom> {
        refill(&mut self.starts, n + 1, 0)?;
        for &k in &self.pairs {
            self.starts[(k >> 32) as usize + 1] += 1;
        }
        for a in 0..n {
            self.starts[a + 1] += self.starts[a];
        }
        Ok(())
    }

    /// The cell list of this step's swept boxes (ids: store indices), in
    /// the rebuild mode; `None` in the persistent mode.
    pub fn swept_list(&self) -> Option<&CellList<D>> {
        (self.valid && !self.persistent).then_some(&self.list)
    }

    /// In the persistent mode, calls `f(i)` once for each moving frame `i`
    /// whose fat box (which contains its box now, and its swept box this
    /// step) overlaps `q`; false, calling nothing, in the rebuild mode.
    pub fn query_fat(&self, q: &GridBox<D>, f: impl FnMut(u32)) -> bool {
        if !(self.valid && self.persistent) {
            return false;
        }
        self.grid.query(q, &self.fat, f);
        true
    }

    /// Each moving frame's swept box this step (store order), as computed
    /// from its frame: valid after an update, until the store changes.
    pub fn swept_boxes(&self) -> &[Aabb<D>] {
        &self.swept
    }

    /// The set as the candidate pass reads it (after an update).
    pub fn side(&self) -> SetSide<'_, D> {
        SetSide { starts: &self.starts, pairs: &self.pairs, swept: &self.rounded }
    }

    /// Frames the set was last updated for.
    pub fn len(&self) -> usize {
        self.rounded.len()
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        let found = {
            #[cfg(feature = "parallel")]
            {
                self.chunk_found.iter().map(Vec::capacity).sum::<usize>()
            }
            #[cfg(not(feature = "parallel"))]
            0
        };
        (self.rounded.capacity() + self.fat.capacity()) * size_of::<GridBox<D>>()
            + self.swept.capacity() * size_of::<Aabb<D>>()
            + self.grid.memory()
            + (self.pairs.capacity() + self.found.capacity() + self.merged.capacity() + self.scratch.capacity() + found)
                * 8
            + (self.starts.capacity() + self.moved.capacity()) * 4
            + self.left.capacity()
    }

    /// Panics unless, while valid, every frame's swept box is inside its
    /// fat box, and the pairs are exactly those of overlapping boxes of
    /// different bodies (`rank`: a frame's body): the fat boxes in the
    /// persistent mode, where every frame is also in its fat box's cells of
    /// the grid; the swept boxes in the rebuild mode. Quadratic in the
    /// frames up to 2,500 of them (every pair checked): for tests.
    pub fn validate(&self, rank: impl Fn(usize) -> u32) {
        if !self.valid {
            return;
        }
        let n = self.len();
        for i in 0..n {
            assert!(self.fat[i].contains(&self.rounded[i]), "frame {i}'s swept box left its fat box and was not moved");
        }
        let boxes = if self.persistent { &self.fat } else { &self.rounded };
        if self.persistent {
            self.grid.validate(|i| self.fat_box(i));
        }
        assert!(self.pairs.is_sorted_by(|a, b| a < b), "pairs sorted, each once");
        for &k in &self.pairs {
            let (a, b) = ((k >> 32) as usize, k as u32 as usize);
            assert!(a < b && b < n, "pair ({a}, {b}) of store indices, in order");
            assert!(boxes[a].overlaps(&boxes[b]), "pair ({a}, {b}) kept with its boxes apart");
            assert_ne!(rank(a), rank(b), "pair ({a}, {b}) of one body");
        }
        if n <= 2500 {
            let want = (0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .filter(|&(a, b)| rank(a) != rank(b) && boxes[a].overlaps(&boxes[b]))
                .count();
            assert_eq!(self.pairs.len(), want, "every pair of overlapping boxes kept");
        }
        assert_eq!(self.starts.len(), n + 1);
    }
}

/// A run of frames' boxes as the sweep writes them.
struct Sweep<'a, const D: usize> {
    rounded: &'a mut [GridBox<D>],
    swept: &'a mut [Aabb<D>],
    fat: &'a mut [GridBox<D>],
    left: &'a mut [bool],
}

/// [`PairSet::sweep`] over a run of frames (`frames`, `meta`) and their
/// boxes (`out`, of the same length).
fn sweep_run<const D: usize>(ctx: &StepContext<'_, D>, out: Sweep<'_, D>, frames: &[Frame<D>], meta: &[Meta]) {
    let Sweep { rounded, swept, fat, left } = out;
    for i in 0..frames.len().min(meta.len()) {
        let (f, m) = (&frames[i], &meta[i]);
        let d = &ctx.shifts[m.rank as usize];
        swept[i] = frame_box(ctx.spins, f, m, d);
        rounded[i] = GridBox::new(&swept[i]);
        if !fat[i].contains(&rounded[i]) {
            fat[i] = fat_box(&rounded[i], d);
            left[i] = true;
        }
    }
}

/// The pairs of `a` of two frames that stayed in their fat boxes (`left`
/// false for both) and the pairs of `b`, merged into `out`: both sorted, no
/// pair in both (a pair of `b` has a frame that left). One pass.
fn merge_kept(a: &[u64], left: &[bool], b: &[u64], out: &mut Vec<u64>) {
    out.clear();
    let gone = |k: u64| left[(k >> 32) as usize] | left[k as u32 as usize];
    let mut j = 0;
    for &k in a {
        if gone(k) {
            continue;
        }
        while j < b.len() && b[j] < k {
            out.push(b[j]);
            j += 1;
        }
        out.push(k);
    }
    out.extend_from_slice(&b[j..]);
}

/// Grows `v`'s capacity to twice its length once it holds more than half
/// of it: a buffer whose size changes from step to step with the set's
/// history (not only with the frames) then allocates on the steps that
/// beat an earlier one by half, not on every new maximum. Room to spare
/// only: on low memory, none.
fn headroom<T>(v: &mut Vec<T>) {
    if 2 * v.len() > v.capacity() {
        // Optional: the buffer still holds what it holds.
        let _ = v.try_reserve(v.len());
    }
}
