//! What a step moves the moving bodies by: computed once at its start
//! ([`StepMotion`], kept after it), and handed to each stage by reference
//! ([`StepContext`]) instead of being stored and read back.

use super::range_check::RangeBound;
use crate::aabb::Aabb;
use crate::frame::Frame;
use crate::ids::{BodyHandle, FrameId};
use crate::narrow::Spin;

/// The moving bodies' motion over the current (after it: the last) step,
/// by rank. Ranks are the broad phase's: its re-ranking permutes `shifts`
/// with them, so that the look-ups after the step ([`World::step_frame`])
/// find each body's displacement.
///
/// [`World::step_frame`]: super::World::step_frame
#[derive(Clone, Debug, Default)]
pub(super) struct StepMotion<const D: usize> {
    /// Per moving body (by rank): its displacement over the step.
    pub shifts: Vec<[f64; D]>,
    /// The next step's displacements while they are checked (and scratch
    /// of the re-ranking).
    pub next_shifts: Vec<[f64; D]>,
    /// The step's turns by rank; empty when no body turns.
    pub spins: Vec<Option<Spin<D>>>,
    /// The last step's turns, and the spinning bodies' frames at its start
    /// (`spin.rs`).
    pub turns: hashbrown::HashMap<BodyHandle, Spin<D>>,
    pub turned_frames: hashbrown::HashMap<FrameId, Frame<D>>,
    /// A box around the moving frames, for the range check (`range_check.rs`).
    pub range: RangeBound<D>,
    /// The box spanned by the displacements last computed (`next_shifts`
    /// when computed; a bad one counts as zero): the range check's input,
    /// and how far the box above moves when the step is made.
    pub span: Aabb<D>,
    /// Per moving body (by rank), a copy of its velocity, so that a step
    /// reads them in one dense array rather than from the bodies' slots:
    /// copied at the first step after the ranks were made (its length is
    /// then theirs), written through by whatever sets a moving body's
    /// velocity ([`StepMotion::velocity_set`]), permuted with the ranks.
    pub velocities: Vec<[f64; D]>,
    /// The broad phase's count of ranks made when the copy was made.
    pub velocities_at: u64,
}

impl<const D: usize> StepMotion<D> {
    /// The arrays a re-ranking permutes (`BroadPhase::follow`).
    pub fn by_rank(&mut self) -> ([&mut [[f64; D]]; 2], &mut Vec<[f64; D]>) {
        ([&mut self.shifts, &mut self.velocities], &mut self.next_shifts)
    }

    /// True when the velocities' copy names the bodies of these ranks
    /// (`ranks_made`: the broad phase's count; `bodies`: their number).
    pub fn velocities_current(&self, ranks_made: u64, bodies: usize) -> bool {
        self.velocities_at == ranks_made && self.velocities.len() == bodies
    }

    /// Moving body `rank` (`None`: not a ranked moving body) now has
    /// velocity `v`: its copy follows.
    pub fn velocity_set(&mut self, rank: Option<u32>, v: [f64; D]) {
        if let Some(c) = rank.and_then(|r| self.velocities.get_mut(r as usize)) {
            *c = v;
        }
    }
}

/// One step's inputs to its stages, by moving body rank: the displacements
/// and turns over the step (borrowed from [`StepMotion`]; the stages need
/// no more of `dt` than these).
#[derive(Clone, Copy, Debug)]
pub(super) struct StepContext<'a, const D: usize> {
    pub shifts: &'a [[f64; D]],
    /// Empty when no body turns.
    pub spins: &'a [Option<Spin<D>>],
}

/// True when displacement `d` is exactly `+0.0` on every axis: a frame
/// moved by it is the frame itself, bit for bit (a `-0.0` would carry its
/// sign into FMB's results).
#[inline(always)]
pub(super) fn zero_shift<const D: usize>(d: &[f64; D]) -> bool {
    d.iter().all(|x| x.to_bits() == 0)
}

impl<const D: usize> StepContext<'_, D> {
    /// True when no body moves in this step: every displacement
    /// [`zero_shift`], no body turning.
    pub fn still(&self) -> bool {
        self.spins.is_empty() && self.shifts.iter().all(zero_shift)
    }
}

impl<const D: usize> StepMotion<D> {
    /// The context of the step whose motion this holds.
    pub fn context(&self) -> StepContext<'_, D> {
        StepContext { shifts: &self.shifts, spins: &self.spins }
    }
}
