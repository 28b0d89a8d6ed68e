//! Placed frames in flat arrays: the working set of a step.
//!
//! Each kind of motion has a store: the frames placed in the world (at rest,
//! at their bodies' poses) and, side by side, the little the hot loop needs
//! about their bodies (ids, filters). Bodies keep the index of each of their
//! frames. Compaction drops removed frames and orders the rest along a
//! Morton curve of their cells, so frames near in space are near in memory
//! and the candidate pass reads the stores nearly sequentially.

use crate::fallible::{NoRoom, room};
use crate::frame::Frame;
use crate::grid::{CellSize, MAX_ITEMS, morton};
use crate::ids::{BodyHandle, FrameId};

/// Slot value of a removed frame awaiting compaction.
pub(crate) const DEAD: u32 = u32::MAX;

/// Compaction keys: a Morton code of `MORTON_BITS` bits above the frame's
/// index (`INDEX_BITS`: a store holds at most 2^26 frames), so one `u64`
/// sorts and remembers each frame. Removed frames get `DEAD_KEY`, above
/// every live key; `permute` marks the keys it has placed with `DONE`.
const INDEX_BITS: u32 = 26;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;
const MORTON_BITS: u32 = 36;
const DEAD_KEY: u64 = 1 << 63;
const DONE: u64 = u64::MAX;
// Every store index fits its bits, and live keys stay below `DEAD_KEY`.
const _: () = assert!(MAX_ITEMS <= 1 << INDEX_BITS && MORTON_BITS + INDEX_BITS < 63);

/// The base-level cell holding a frame's box centre.
fn centre_cell<const D: usize>(f: &Frame<D>, cell: &CellSize) -> [i32; D] {
    let b = f.aabb();
    cell.cell_of(&std::array::from_fn(|k| 0.5 * (b.min[k] + b.max[k])), 0)
}

/// Cells made relative to the lowest one and coarsened until every axis
/// fits `MORTON_BITS / D` bits: the curve's order is kept, merging cells
/// only in worlds wider than 2^12 cells in 3D (2^18 in 2D).
struct Coarse<const D: usize> {
    lo: [i64; D],
    shift: u32,
}

impl<const D: usize> Coarse<D> {
    fn of(cells: impl Iterator<Item = [i32; D]>) -> Self {
        let (mut lo, mut hi) = ([i64::MAX; D], [i64::MIN; D]);
        for c in cells {
            for k in 0..D {
                lo[k] = lo[k].min(i64::from(c[k]));
                hi[k] = hi[k].max(i64::from(c[k]));
            }
        }
        let span = (0..D).map(|k| hi[k].saturating_sub(lo[k]).max(0) as u64).max().unwrap_or(0);
        let shift = (u64::BITS - span.leading_zeros()).saturating_sub(MORTON_BITS / D as u32);
        Coarse { lo, shift }
    }

    fn cell(&self, c: [i32; D]) -> [i32; D] {
        // Below 2^(MORTON_BITS / D) ≤ 2^18 after the shift: fits an i32.
        std::array::from_fn(|k| ((i64::from(c[k]) - self.lo[k]) as u64 >> self.shift) as i32)
    }
}

/// A placed frame's body, without touching the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Meta {
    pub slot: u32,
    pub generation: u32,
    pub frame: u32,
    pub groups: u32,
    pub mask: u32,
    /// Moving store only: the body's rank among moving bodies, which
    /// indexes the step's displacements.
    pub rank: u32,
}

impl Meta {
    /// The frame's id.
    #[inline(always)]
    pub fn id(&self) -> FrameId {
        FrameId { body: self.body(), index: self.frame }
    }

    /// The frame's body.
    #[inline(always)]
    pub fn body(&self) -> BodyHandle {
        BodyHandle { index: self.slot, generation: self.generation }
    }

    /// True when the two frames' bodies may collide: different bodies whose
    /// filters accept each other.
    #[inline(always)]
    pub fn pairs_with(&self, other: &Meta) -> bool {
        self.slot != other.slot && self.groups & other.mask != 0 && other.groups & self.mask != 0
    }

    /// False once the frame's body was removed.
    #[inline(always)]
    pub fn live(&self) -> bool {
        self.slot != DEAD
    }
}

/// Placed frames and their metadata, index for index.
#[derive(Clone, Debug, Default)]
pub(crate) struct Store<const D: usize> {
    pub frames: Vec<Frame<D>>,
    pub meta: Vec<Meta>,
    /// Compaction scratch: one key a frame.
    order: Vec<u64>,
}

impl<const D: usize> Store<D> {
    /// Appends a frame; returns its index.
    pub fn push(&mut self, frame: Frame<D>, meta: Meta) -> u32 {
        self.frames.push(frame);
        self.meta.push(meta);
        (self.frames.len() - 1) as u32
    }

    /// Marks frame `i` removed.
    pub fn kill(&mut self, i: u32) {
        self.meta[i as usize].slot = DEAD;
    }

    /// Number of frames, live or not.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// The live frames with their metadata.
    pub fn live(&self) -> impl Iterator<Item = (&Frame<D>, &Meta)> + '_ {
        self.frames.iter().zip(&self.meta).filter(|(_, m)| m.live())
    }

    /// Drops removed frames and sorts the rest along a Morton curve of the
    /// cells (of size `cell`) holding their boxes' centres; `moved(meta, i)`
    /// is told each kept frame's new index. In place: with `keep_scratch`
    /// (a store compacted every few steps), nothing is allocated once the
    /// scratch has grown and no frame was removed; without, the scratch (8
    /// bytes a frame) is given back.
    ///
    /// # Errors
    /// [`NoRoom`] for the scratch, the store unchanged.
    pub fn compact(
        &mut self,
        cell: &CellSize,
        keep_scratch: bool,
        mut moved: impl FnMut(&Meta, u32),
    ) -> Result<(), NoRoom> {
        self.order.clear();
        room(&mut self.order, self.frames.len())?;
        let coarse = Coarse::of(self.live().map(|(f, _)| centre_cell(f, cell)));
        for (i, (f, m)) in self.frames.iter().zip(&self.meta).enumerate() {
            // Cannot truncate: a store holds at most MAX_ITEMS (2^26) frames.
            let index = i as u64;
            let key = if m.live() { morton(&coarse.cell(centre_cell(f, cell))) << INDEX_BITS } else { DEAD_KEY };
            self.order.push(key | index);
        }
        self.order.sort_unstable();
        let live = self.order.partition_point(|&key| key < DEAD_KEY);
        self.permute();
        self.frames.truncate(live);
        self.meta.truncate(live);
        // No allocation unless frames were removed (or grown) since.
        self.frames.shrink_to_fit();
        self.meta.shrink_to_fit();
        for (i, m) in self.meta.iter().enumerate() {
            moved(m, i as u32);
        }
        if !keep_scratch {
            self.order = Vec::new();
        }
        Ok(())
    }

    /// Puts the frames listed by `first` (store indices, each at most
    /// once) first, in that order, and the others after them in their
    /// order; `moved(meta, i)` is told each frame's new index. In place,
    /// with the kept scratch: the moving store follows the cell list's slot
    /// order this way, so the candidate pass reads frames nearly in
    /// sequence. The store must hold no removed frame.
    /// Allocates nothing after [`Store::reserve_reorder`].
    pub fn reorder(&mut self, first: impl Iterator<Item = u32>, mut moved: impl FnMut(&Meta, u32)) {
        let n = self.frames.len() as u64;
        self.order.clear();
        self.order.extend((0..n).map(|i| n << INDEX_BITS | i));
        for (rank, i) in first.enumerate() {
            self.order[i as usize] = (rank as u64) << INDEX_BITS | u64::from(i);
        }
        self.order.sort_unstable();
        self.permute();
        for (i, m) in self.meta.iter().enumerate() {
            moved(m, i as u32);
        }
    }

    /// Room for a [`Store::reorder`] of the frames as they are.
    ///
    /// # Errors
    /// [`NoRoom`], the store unchanged.
    pub fn reserve_reorder(&mut self) -> Result<(), NoRoom> {
        room(&mut self.order, self.frames.len())
    }

    /// Moves the frame indexed by `order[k]` (and its metadata) to index
    /// `k`, for every `k`, by following the permutation's cycles; `order` is
    /// spent.
    fn permute(&mut self) {
        for start in 0..self.order.len() {
            if self.order[start] == DONE {
                continue;
            }
            let (frame, meta) = (self.frames[start], self.meta[start]);
            let mut k = start;
            loop {
                let from = (self.order[k] & INDEX_MASK) as usize;
                self.order[k] = DONE;
                if from == start {
                    (self.frames[k], self.meta[k]) = (frame, meta);
                    break;
                }
                (self.frames[k], self.meta[k]) = (self.frames[from], self.meta[from]);
                k = from;
            }
        }
    }

    /// Bytes held by the metadata and scratch (the frames themselves are the
    /// world's data, not the broad phase's).
    pub fn meta_memory(&self) -> usize {
        self.meta.capacity() * size_of::<Meta>() + self.order.capacity() * size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(slot: u32, frame: u32) -> Meta {
        Meta { slot, generation: 0, frame, groups: 1, mask: u32::MAX, rank: 0 }
    }

    /// A store of unit boxes at `x = 7k mod 101` (and `y = k`), every third
    /// one removed.
    fn store() -> Store<2> {
        let mut s = Store::default();
        for k in 0..300u32 {
            let x = f64::from((7 * k) % 101);
            let f = Frame::from_aabb([x, f64::from(k)], [x + 1.0, f64::from(k) + 1.0]).unwrap();
            s.push(f, meta(k, k));
            if k % 3 == 0 {
                s.kill(k);
            }
        }
        s
    }

    #[test]
    fn compaction_keeps_each_live_frame_once_in_curve_order() {
        for keep in [false, true] {
            let mut s = store();
            let cell = CellSize::new(2.0);
            let mut told = Vec::new();
            s.compact(&cell, keep, |m, i| told.push((m.slot, i))).unwrap();
            assert_eq!(s.len(), 200);
            assert_eq!(s.frames.capacity(), 200, "given back what removal freed");
            // Each live frame once, with its own metadata, and reported.
            let mut slots: Vec<u32> = s.meta.iter().map(|m| m.slot).collect();
            for (i, (f, m)) in s.frames.iter().zip(&s.meta).enumerate() {
                assert_eq!(f.aabb().min[1], f64::from(m.slot), "frame and metadata moved together");
                assert!(told.contains(&(m.slot, i as u32)));
            }
            slots.sort_unstable();
            assert_eq!(slots, (0..300).filter(|k| k % 3 != 0).collect::<Vec<_>>());
            // Along the Morton curve of the cells.
            let coarse = Coarse::of(s.frames.iter().map(|f| centre_cell(f, &cell)));
            let keys: Vec<u64> = s.frames.iter().map(|f| morton(&coarse.cell(centre_cell(f, &cell)))).collect();
            assert!(keys.windows(2).all(|w| w[0] <= w[1]));
            assert_eq!(s.order.capacity() > 0, keep);
        }
    }

    #[test]
    fn reordering_puts_the_listed_frames_first_and_keeps_the_rest_in_order() {
        let mut s = store();
        s.compact(&CellSize::new(2.0), true, |_, _| {}).unwrap();
        let before: Vec<u32> = s.meta.iter().map(|m| m.slot).collect();
        let first = [17u32, 3, 150, 0];
        let mut told = Vec::new();
        s.reorder(first.into_iter(), |m, i| told.push((m.slot, i)));
        let after: Vec<u32> = s.meta.iter().map(|m| m.slot).collect();
        let listed: Vec<u32> = first.iter().map(|&i| before[i as usize]).collect();
        assert_eq!(after[..4], listed[..]);
        let rest: Vec<u32> =
            before.iter().enumerate().filter(|(i, _)| !first.contains(&(*i as u32))).map(|(_, &x)| x).collect();
        assert_eq!(after[4..], rest[..]);
        for (i, (f, m)) in s.frames.iter().zip(&s.meta).enumerate() {
            assert_eq!(f.aabb().min[1], f64::from(m.slot), "frame and metadata moved together");
            assert!(told.contains(&(m.slot, i as u32)));
        }
    }

    #[test]
    fn far_apart_cells_are_coarsened_not_wrapped() {
        let coarse = Coarse::<3>::of([[-2_000_000_000, 0, 5], [2_000_000_000, 7, 5]].into_iter());
        let (a, b) = (coarse.cell([-2_000_000_000, 0, 5]), coarse.cell([2_000_000_000, 7, 5]));
        assert_eq!(a, [0, 0, 0]);
        assert!(b[0] > 0 && b[0] < 1 << 12, "{b:?}");
        assert!(morton(&b) < 1 << MORTON_BITS);
    }
}
