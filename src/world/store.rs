//! Placed frames in flat arrays: the working set of a step.
//!
//! Each kind of motion has a store: the frames placed in the world (at rest,
//! at their bodies' poses) and, side by side, the little the hot loop needs
//! about their bodies (ids, filters). Bodies keep the index of each of their
//! frames. Compaction drops removed frames and orders the rest along a
//! Morton curve of their cells, so frames near in space are near in memory
//! and the candidate pass reads the stores nearly sequentially.

use super::body::{BodyHandle, FrameId};
use crate::frame::Frame;
use crate::grid::{CellSize, morton};

/// Slot value of a removed frame awaiting compaction.
const DEAD: u32 = u32::MAX;

/// Compaction keys: removed frames sort after every live one (live keys
/// have the top bit cleared, which only merges far-apart Morton codes), and
/// a placed frame's key is overwritten with `DONE`.
const DEAD_KEY: u64 = 1 << 63;
const DONE: u64 = u64::MAX;

/// A placed frame's body, without touching the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// Removed frames still in the arrays.
    dead: usize,
    /// Compaction scratch.
    order: Vec<(u64, u32)>,
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
        self.dead += 1;
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
    /// scratch has grown; without, the scratch is given back.
    pub fn compact(&mut self, cell: &CellSize, keep_scratch: bool, mut moved: impl FnMut(&Meta, u32)) {
        self.order.clear();
        self.order.reserve(self.frames.len());
        for (i, (f, m)) in self.frames.iter().zip(&self.meta).enumerate() {
            // Removed frames sort last, to be cut off.
            let key = if m.live() {
                let b = f.aabb();
                let centre: [f64; D] = std::array::from_fn(|k| 0.5 * (b.min[k] + b.max[k]));
                morton(&cell.cell_of(&centre, 0)) & !DEAD_KEY
            } else {
                DEAD_KEY
            };
            self.order.push((key, i as u32));
        }
        self.order.sort_unstable();
        let live = self.order.partition_point(|&(key, _)| key != DEAD_KEY);
        self.permute();
        self.frames.truncate(live);
        self.meta.truncate(live);
        for (i, m) in self.meta.iter().enumerate() {
            moved(m, i as u32);
        }
        self.dead = 0;
        if !keep_scratch {
            self.order = Vec::new();
        }
    }

    /// Moves frame `order[k].1` (and its metadata) to index `k`, for every
    /// `k`, by following the permutation's cycles; `order` is spent.
    fn permute(&mut self) {
        for start in 0..self.order.len() {
            if self.order[start].0 == DONE {
                continue;
            }
            let (frame, meta) = (self.frames[start], self.meta[start]);
            let mut k = start;
            loop {
                let from = self.order[k].1 as usize;
                self.order[k].0 = DONE;
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
        self.meta.capacity() * size_of::<Meta>() + self.order.capacity() * size_of::<(u64, u32)>()
    }
}
